-- A catalog in the family's language (docs/localization.md): a book's title and description and a
-- category's name per locale. The base row keeps the text in the book's own language (a
-- category's in the default locale); a translation is a row here. A missing value (NULL, or no
-- row) falls back along the request's locales, then to the base row.

CREATE TABLE book_translations (
    book_id      bigint NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    locale       text NOT NULL CONSTRAINT book_translations_locale_format CHECK (locale ~ '^[a-z]{2}(-[A-Z]{2})?$'),
    title        text CONSTRAINT book_translations_title_length CHECK (title IS NULL OR (btrim(title) <> '' AND length(title) <= 500)),
    description  text CONSTRAINT book_translations_description_length CHECK (description IS NULL OR (btrim(description) <> '' AND length(description) <= 10000)),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (book_id, locale),
    -- A row says something: an empty translation is no row.
    CONSTRAINT book_translations_not_empty CHECK (title IS NOT NULL OR description IS NOT NULL)
);
CREATE INDEX book_translations_locale_idx ON book_translations (locale);
CREATE TRIGGER book_translations_touch BEFORE UPDATE ON book_translations FOR EACH ROW EXECUTE FUNCTION storytime_touch_updated_at();

CREATE TABLE category_translations (
    category_id  bigint NOT NULL REFERENCES categories (id) ON DELETE CASCADE,
    locale       text NOT NULL CONSTRAINT category_translations_locale_format CHECK (locale ~ '^[a-z]{2}(-[A-Z]{2})?$'),
    name         text NOT NULL CONSTRAINT category_translations_name_not_blank CHECK (btrim(name) <> '' AND length(name) <= 100),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (category_id, locale)
);
CREATE INDEX category_translations_locale_idx ON category_translations (locale);
CREATE TRIGGER category_translations_touch BEFORE UPDATE ON category_translations FOR EACH ROW EXECUTE FUNCTION storytime_touch_updated_at();

-- A family's account may name the locale it reads in (used when the app sends none). Instances
-- keep it with the account's country, so a change moves the countries' version.
ALTER TABLE parents ADD COLUMN preferred_locale text CONSTRAINT parents_preferred_locale_format CHECK (preferred_locale ~ '^[a-z]{2}(-[A-Z]{2})?$');
CREATE TRIGGER parents_preferred_locale_version AFTER UPDATE OF preferred_locale ON parents
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_bump_countries_version();

-- Search finds a book by any of its titles: the translations' titles, "fr<TAB>Le titre" lines in
-- locale order, are kept on the book, whose search_vector (words, weight A) and stem_vector (each
-- title's stems in its own locale's language, weight A) include them. Writing them is an UPDATE
-- of the book, so the change log, the vocabulary and every cache follow as for any book change.
ALTER TABLE books ADD COLUMN translated_titles text NOT NULL DEFAULT '';

-- The titles of `translated_titles` without their locales.
CREATE FUNCTION storytime_translation_text(titles text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
    SELECT regexp_replace(titles, '(^|\n)[^\t\n]*\t', ' ', 'g')
$$;

-- The stem tokens of each title of `translated_titles` in its locale's language.
CREATE FUNCTION storytime_translation_stems(titles text) RETURNS tsvector
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE STRICT AS $$
DECLARE
    result tsvector := ''::tsvector;
    line text;
BEGIN
    FOREACH line IN ARRAY string_to_array(titles, E'\n') LOOP
        CONTINUE WHEN position(E'\t' IN line) = 0;
        -- Qualified: a restore (pg_restore) computes the column with an empty search_path.
        result := result || public.storytime_stem_tokens(split_part(split_part(line, E'\t', 1), '-', 1), split_part(line, E'\t', 2));
    END LOOP;
    RETURN result;
END $$;

ALTER TABLE books DROP COLUMN stem_vector, DROP COLUMN search_vector;
ALTER TABLE books
    ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple', storytime_unaccent(title)), 'A') ||
        setweight(to_tsvector('simple', storytime_unaccent(author)), 'B') ||
        setweight(to_tsvector('simple', storytime_unaccent(description)), 'C') ||
        setweight(to_tsvector('simple', storytime_unaccent(storytime_translation_text(translated_titles))), 'A')
    ) STORED,
    ADD COLUMN stem_vector tsvector GENERATED ALWAYS AS (
        setweight(storytime_stem_tokens(language, title), 'A') || setweight(storytime_stem_tokens(language, author), 'B') ||
        setweight(storytime_translation_stems(translated_titles), 'A')
    ) STORED;
CREATE INDEX books_search_vector_idx ON books USING gin (search_vector);
CREATE INDEX books_stem_vector_idx ON books USING gin (stem_vector);

-- A change of a book's translations rewrites its translated titles (an UPDATE of the book, even
-- when only a description changed: the book's JSON changed, so the catalog must hear of it).
CREATE FUNCTION storytime_book_translations_changed() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(DISTINCT book_id) INTO ids FROM new_rows;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(DISTINCT book_id) INTO ids FROM old_rows;
    ELSE
        SELECT array_agg(x) INTO ids FROM (SELECT book_id AS x FROM new_rows UNION SELECT book_id FROM old_rows) AS u;
    END IF;
    IF ids IS NOT NULL THEN
        UPDATE books b SET translated_titles = COALESCE((
            SELECT string_agg(t.locale || E'\t' || regexp_replace(t.title, '[\t\n\r]', ' ', 'g'), E'\n' ORDER BY t.locale)
              FROM book_translations t WHERE t.book_id = b.id AND t.title IS NOT NULL), '')
         WHERE b.id = ANY(ids);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER book_translations_insert AFTER INSERT ON book_translations REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_book_translations_changed();
CREATE TRIGGER book_translations_update AFTER UPDATE ON book_translations REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_book_translations_changed();
CREATE TRIGGER book_translations_delete AFTER DELETE ON book_translations REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_book_translations_changed();

-- A category's translated name is shown in its books: they and the category list changed.
CREATE FUNCTION storytime_category_translations_changed() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    changed bigint[];
    ids bigint[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(category_id) INTO changed FROM new_rows;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(category_id) INTO changed FROM old_rows;
    ELSE
        SELECT array_agg(x) INTO changed FROM (SELECT category_id AS x FROM new_rows UNION SELECT category_id FROM old_rows) AS u;
    END IF;
    SELECT array_agg(DISTINCT book_id) INTO ids FROM book_categories WHERE category_id = ANY(changed);
    PERFORM storytime_catalog_log(COALESCE(ids, '{}'), true);
    RETURN NULL;
END $$;
CREATE TRIGGER category_translations_insert AFTER INSERT ON category_translations REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_category_translations_changed();
CREATE TRIGGER category_translations_update AFTER UPDATE ON category_translations REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_category_translations_changed();
CREATE TRIGGER category_translations_delete AFTER DELETE ON category_translations REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_category_translations_changed();
CREATE TRIGGER category_translations_truncate AFTER TRUNCATE ON category_translations FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_truncated();
CREATE FUNCTION storytime_book_translations_truncated() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    UPDATE books SET translated_titles = '' WHERE translated_titles <> '';
    RETURN NULL;
END $$;
CREATE TRIGGER book_translations_truncate AFTER TRUNCATE ON book_translations FOR EACH STATEMENT EXECUTE FUNCTION storytime_book_translations_truncated();
