-- Book covers uploaded in the console: renditions made by libvips at fixed widths in WebP and
-- JPEG, stored here so every instance serves them (GET /covers/<hash>.<ext>, immutable).
CREATE TABLE cover_files (
    -- The first 32 hex digits of the SHA-256 of the bytes: the file's name and its ETag.
    hash          text PRIMARY KEY CONSTRAINT cover_files_hash_check CHECK (hash ~ '^[0-9a-f]{32}$'),
    content_type  text NOT NULL CONSTRAINT cover_files_type_check CHECK (content_type IN ('image/webp', 'image/jpeg')),
    width         integer NOT NULL CHECK (width > 0),
    height        integer NOT NULL CHECK (height > 0),
    bytes         bytea NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- A book's cover: the original's size, its dominant colour, and the renditions as the API
-- shows them (`api_json`, written by the app with the API's encoder so engine and SQL answers
-- carry the same bytes).
CREATE TABLE book_covers (
    book_id         bigint PRIMARY KEY REFERENCES books (id) ON DELETE CASCADE,
    width           integer NOT NULL CHECK (width > 0),
    height          integer NOT NULL CHECK (height > 0),
    dominant_color  text NOT NULL CONSTRAINT book_covers_color_check CHECK (dominant_color ~ '^#[0-9a-f]{6}$'),
    files           text[] NOT NULL,
    api_json        text NOT NULL,
    uploaded_by     bigint REFERENCES staff_users (id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

-- A cover shows in the book's API object: the catalog changes with it (the engine reloads the book).
CREATE TRIGGER book_covers_log_insert AFTER INSERT ON book_covers REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_rows_changed();
CREATE TRIGGER book_covers_log_update AFTER UPDATE ON book_covers REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_rows_changed();
CREATE TRIGGER book_covers_log_delete AFTER DELETE ON book_covers REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_rows_changed();
CREATE TRIGGER book_covers_log_truncate AFTER TRUNCATE ON book_covers FOR EACH STATEMENT EXECUTE FUNCTION storytime_catalog_truncated();
