-- A book moved to another category: its first category replaced by a random one, in one transaction.
\set id random(1, :books)
BEGIN;
DELETE FROM book_categories WHERE book_id = :id AND category_id = (SELECT min(category_id) FROM book_categories WHERE book_id = :id);
INSERT INTO book_categories (book_id, category_id) SELECT :id, id FROM categories ORDER BY random() LIMIT 1 ON CONFLICT DO NOTHING;
COMMIT;
