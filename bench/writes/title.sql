-- A title edited: " (Revised)" added, or taken off again (the book's title words and sort key change).
\set id random(1, :books)
UPDATE books SET title = CASE WHEN title LIKE '% (Revised)' THEN left(title, -10) ELSE title || ' (Revised)' END WHERE id = :id;
