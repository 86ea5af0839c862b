-- A catalog version, bumped in the same transaction as any change that can alter what parents see
-- in the catalog (books, their categories, videos and rights, category and publisher names). App
-- instances cache counts and pages per version: one cheap read per request tells them whether a
-- change was committed by anyone (console, another instance, psql). Statement-level triggers, so
-- a bulk change bumps once.
CREATE TABLE catalog_state (
    id       boolean PRIMARY KEY DEFAULT true CONSTRAINT catalog_state_single_row CHECK (id),
    version  bigint NOT NULL DEFAULT 1
);
INSERT INTO catalog_state (id, version) VALUES (true, 1);

CREATE OR REPLACE FUNCTION storytime_bump_catalog_version() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    UPDATE catalog_state SET version = version + 1 WHERE id;
    RETURN NULL;
END $$;

CREATE TRIGGER books_bump_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON books
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_bump_catalog_version();
CREATE TRIGGER book_categories_bump_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON book_categories
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_bump_catalog_version();
CREATE TRIGGER categories_bump_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON categories
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_bump_catalog_version();
CREATE TRIGGER publishers_bump_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON publishers
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_bump_catalog_version();
CREATE TRIGGER video_assets_bump_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON video_assets
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_bump_catalog_version();
CREATE TRIGGER rights_windows_bump_version AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON rights_windows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_bump_catalog_version();
