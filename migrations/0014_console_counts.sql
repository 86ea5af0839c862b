-- Counts the console shows on every page of a million books, kept by the database as categories
-- are assigned, so no page counts 1.8 million assignments to show them:
--   category_book_counts: how many books each category has (the categories list, sortable);
--   uncategorized_books: the books with no category at all (the dashboard's panel and count).
-- Statement-level triggers with transition tables: one bulk assignment is one update per category.
-- They live in their own tables, so keeping them never touches books or categories (whose
-- triggers bump the catalog version and the updated_at the audit log shows).
CREATE TABLE category_book_counts (
    category_id bigint PRIMARY KEY REFERENCES categories (id) ON DELETE CASCADE,
    n bigint NOT NULL
);
CREATE TABLE uncategorized_books (
    book_id bigint PRIMARY KEY REFERENCES books (id) ON DELETE CASCADE
);

INSERT INTO category_book_counts (category_id, n) SELECT category_id, count(*) FROM book_categories GROUP BY category_id;
INSERT INTO uncategorized_books (book_id)
SELECT b.id FROM books b WHERE NOT EXISTS (SELECT 1 FROM book_categories bc WHERE bc.book_id = b.id);

-- Added and removed assignments, per category, in category order (locks taken in one order).
CREATE FUNCTION storytime_category_counts(added bigint[], removed bigint[]) RETURNS void LANGUAGE sql AS $$
    INSERT INTO category_book_counts AS k (category_id, n)
    SELECT d.category_id, d.delta FROM (
        SELECT c AS category_id, sum(s) AS delta
          FROM (SELECT unnest(added) AS c, 1 AS s UNION ALL SELECT unnest(removed), -1) x
         GROUP BY c HAVING sum(s) <> 0
    ) d JOIN categories cat ON cat.id = d.category_id
     ORDER BY d.category_id
    ON CONFLICT (category_id) DO UPDATE SET n = k.n + excluded.n;
$$;

CREATE FUNCTION storytime_book_categories_counted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    added bigint[] := '{}';
    removed bigint[] := '{}';
    touched bigint[];
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN SELECT COALESCE(array_agg(category_id), '{}') INTO added FROM new_rows; END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN SELECT COALESCE(array_agg(category_id), '{}') INTO removed FROM old_rows; END IF;
    PERFORM storytime_category_counts(added, removed);
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        DELETE FROM uncategorized_books u USING new_rows n WHERE u.book_id = n.book_id;
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        SELECT array_agg(DISTINCT book_id) INTO touched FROM old_rows;
        INSERT INTO uncategorized_books (book_id)
        SELECT b.id FROM books b
         WHERE b.id = ANY(touched) AND NOT EXISTS (SELECT 1 FROM book_categories bc WHERE bc.book_id = b.id)
        ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER book_categories_count_insert AFTER INSERT ON book_categories REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_book_categories_counted();
CREATE TRIGGER book_categories_count_update AFTER UPDATE ON book_categories REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_book_categories_counted();
CREATE TRIGGER book_categories_count_delete AFTER DELETE ON book_categories REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_book_categories_counted();

-- A new book has no category yet.
CREATE FUNCTION storytime_books_uncategorized() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO uncategorized_books (book_id) SELECT id FROM new_rows ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER books_uncategorized_insert AFTER INSERT ON books REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_books_uncategorized();

-- TRUNCATE has no transition table: count again from what is left.
CREATE FUNCTION storytime_book_categories_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM category_book_counts;
    INSERT INTO uncategorized_books (book_id) SELECT id FROM books ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER book_categories_count_truncate AFTER TRUNCATE ON book_categories
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_book_categories_truncated();
