-- A book's worldwide rights windows narrowed (Japan excluded), then widened again (two commits:
-- the country catalogs change; the bench database is left as it was).
\set id random(1, :books)
UPDATE rights_windows SET exclude_territories = '{JP}' WHERE book_id = :id AND territories = '{}' AND exclude_territories = '{}';
-- (The undo a tenth of a second later: every instance reads the change before it is undone.)
\sleep 100 ms
UPDATE rights_windows SET exclude_territories = '{}' WHERE book_id = :id AND territories = '{}' AND exclude_territories = '{JP}';
