-- The catalog's change log: which books changed at which catalog version, written by triggers in
-- the writer's transaction (so psql, the console, bulk SQL and every instance count). App
-- instances keep the catalog in memory and, when the version moves, load just these books.
-- The version row is locked by the bump until commit, so versions are handed out in commit order.
CREATE TABLE catalog_changes (
    version     bigint NOT NULL,
    -- NULL: category or publisher names changed (the instance reloads the category list).
    book_id     bigint,
    -- The whole catalog changed (TRUNCATE): instances rebuild.
    everything  boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX catalog_changes_version_idx ON catalog_changes (version);
-- Changes up to this version have been purged: an instance older than that rebuilds.
ALTER TABLE catalog_state ADD COLUMN purged_through bigint NOT NULL DEFAULT 0;

CREATE OR REPLACE FUNCTION storytime_catalog_log(ids bigint[], names_changed boolean, everything boolean DEFAULT false) RETURNS void
    LANGUAGE plpgsql AS $$
DECLARE
    v bigint;
BEGIN
    UPDATE catalog_state SET version = version + 1 WHERE id RETURNING version INTO v;
    INSERT INTO catalog_changes (version, book_id)
    SELECT DISTINCT v, x FROM unnest(ids) AS x WHERE x IS NOT NULL;
    IF names_changed OR everything THEN
        INSERT INTO catalog_changes (version, book_id, everything) VALUES (v, NULL, everything);
    END IF;
END $$;

-- Tables whose rows name a book in book_id (or are the book): the changed rows' books.
CREATE OR REPLACE FUNCTION storytime_catalog_rows_changed() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    key text := CASE WHEN TG_TABLE_NAME = 'books' THEN 'id' ELSE 'book_id' END;
    ids bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        EXECUTE format('SELECT array_agg(%I) FROM new_rows', key) INTO ids;
    ELSIF TG_OP = 'DELETE' THEN
        EXECUTE format('SELECT array_agg(%I) FROM old_rows', key) INTO ids;
    ELSE
        EXECUTE format('SELECT array_agg(x) FROM (SELECT %1$I AS x FROM new_rows UNION SELECT %1$I FROM old_rows) AS u', key) INTO ids;
    END IF;
    IF ids IS NOT NULL THEN PERFORM storytime_catalog_log(ids, false); END IF;
    RETURN NULL;
END $$;

-- Categories and publishers: their books show the names, and the category list changed.
CREATE OR REPLACE FUNCTION storytime_catalog_names_changed() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    changed bigint[];
    ids bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(id) INTO changed FROM new_rows;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(id) INTO changed FROM old_rows;
    ELSE
        SELECT array_agg(x) INTO changed FROM (SELECT id AS x FROM new_rows UNION SELECT id FROM old_rows) AS u;
    END IF;
    IF TG_TABLE_NAME = 'categories' THEN
        SELECT array_agg(DISTINCT book_id) INTO ids FROM book_categories WHERE category_id = ANY(changed);
    ELSE
        SELECT array_agg(id) INTO ids FROM books WHERE publisher_id = ANY(changed);
    END IF;
    PERFORM storytime_catalog_log(COALESCE(ids, '{}'), true);
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION storytime_catalog_truncated() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    PERFORM storytime_catalog_log('{}', false, true);
    RETURN NULL;
END $$;

-- The bare version bumps of 0006 are replaced by these (each also bumps the version).
DROP TRIGGER books_bump_version ON books;
DROP TRIGGER book_categories_bump_version ON book_categories;
DROP TRIGGER categories_bump_version ON categories;
DROP TRIGGER publishers_bump_version ON publishers;
DROP TRIGGER video_assets_bump_version ON video_assets;
DROP TRIGGER rights_windows_bump_version ON rights_windows;

CREATE TRIGGER books_log_insert AFTER INSERT ON books REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_rows_changed();
CREATE TRIGGER books_log_update AFTER UPDATE ON books REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_rows_changed();
CREATE TRIGGER books_log_delete AFTER DELETE ON books REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_rows_changed();
CREATE TRIGGER book_categories_log_insert AFTER INSERT ON book_categories REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_rows_changed();
CREATE TRIGGER book_categories_log_update AFTER UPDATE ON book_categories REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_rows_changed();
CREATE TRIGGER book_categories_log_delete AFTER DELETE ON book_categories REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_rows_changed();
CREATE TRIGGER video_assets_log_insert AFTER INSERT ON video_assets REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_rows_changed();
CREATE TRIGGER video_assets_log_update AFTER UPDATE ON video_assets REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_rows_changed();
CREATE TRIGGER video_assets_log_delete AFTER DELETE ON video_assets REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_rows_changed();
CREATE TRIGGER rights_windows_log_insert AFTER INSERT ON rights_windows REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_rows_changed();
CREATE TRIGGER rights_windows_log_update AFTER UPDATE ON rights_windows REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_rows_changed();
CREATE TRIGGER rights_windows_log_delete AFTER DELETE ON rights_windows REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_rows_changed();
CREATE TRIGGER categories_log_insert AFTER INSERT ON categories REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_names_changed();
CREATE TRIGGER categories_log_update AFTER UPDATE ON categories REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_names_changed();
CREATE TRIGGER categories_log_delete AFTER DELETE ON categories REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_names_changed();
CREATE TRIGGER publishers_log_insert AFTER INSERT ON publishers REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_names_changed();
CREATE TRIGGER publishers_log_update AFTER UPDATE ON publishers REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_names_changed();
CREATE TRIGGER publishers_log_delete AFTER DELETE ON publishers REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_names_changed();
CREATE TRIGGER books_log_truncate AFTER TRUNCATE ON books FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_truncated();
CREATE TRIGGER book_categories_log_truncate AFTER TRUNCATE ON book_categories FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_truncated();
CREATE TRIGGER video_assets_log_truncate AFTER TRUNCATE ON video_assets FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_truncated();
CREATE TRIGGER rights_windows_log_truncate AFTER TRUNCATE ON rights_windows FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_truncated();
CREATE TRIGGER categories_log_truncate AFTER TRUNCATE ON categories FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_truncated();
CREATE TRIGGER publishers_log_truncate AFTER TRUNCATE ON publishers FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_truncated();

-- Titles sort byte-wise on lower(title) in both the SQL path and the in-memory engine.
CREATE INDEX books_active_title_c_idx ON books ((lower(title) COLLATE "C"), id) WHERE status = 'active';
DROP INDEX books_active_title_idx;
