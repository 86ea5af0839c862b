-- A book put in one more category, then taken out of it again (two commits; 0: the book was in
-- every category, or is no book).
\set id random(1, :books)
WITH pick AS (SELECT c.id FROM categories c
               WHERE EXISTS (SELECT 1 FROM books WHERE id = :id)
                 AND NOT EXISTS (SELECT 1 FROM book_categories bc WHERE bc.book_id = :id AND bc.category_id = c.id)
               ORDER BY random() LIMIT 1),
     added AS (INSERT INTO book_categories (book_id, category_id) SELECT :id, id FROM pick RETURNING category_id)
SELECT COALESCE((SELECT category_id FROM added), 0) AS added \gset
-- (The undo a tenth of a second later: every instance reads the change before it is undone.)
\sleep 100 ms
DELETE FROM book_categories WHERE book_id = :id AND category_id = :added;
