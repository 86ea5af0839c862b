-- A title edited and edited back: " (Revised)" added, then taken off (two commits: the book's
-- title words and sort key change twice; the bench database is left as it was).
\set id random(1, :books)
UPDATE books SET title = title || ' (Revised)' WHERE id = :id AND title NOT LIKE '% (Revised)';
-- (The undo a tenth of a second later: every instance reads the change before it is undone.)
\sleep 100 ms
UPDATE books SET title = left(title, -10) WHERE id = :id AND title LIKE '% (Revised)';
