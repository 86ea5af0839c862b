-- An active book taken down (archived), then put back: two commits, the book leaves the catalog
-- and returns (the first active book from a random id on, wrapping around).
\set id random(1, :books)
UPDATE books SET status = 'archived'
 WHERE id = COALESCE((SELECT id FROM books WHERE id >= :id AND status = 'active' ORDER BY id LIMIT 1),
                     (SELECT id FROM books WHERE status = 'active' ORDER BY id LIMIT 1))
RETURNING id AS taken \gset
-- (The undo a tenth of a second later: every instance reads the change before it is undone.)
\sleep 100 ms
UPDATE books SET status = 'active' WHERE id = :taken;
