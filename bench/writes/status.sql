-- An active book taken down (archived), then put back: two commits, the book leaves the catalog and returns.
\set id random(1, :books - 1000)
UPDATE books SET status = 'archived' WHERE id = (SELECT id FROM books WHERE id >= :id AND status = 'active' ORDER BY id LIMIT 1) RETURNING id AS taken \gset
UPDATE books SET status = 'active' WHERE id = :taken;
