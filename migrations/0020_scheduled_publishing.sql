-- Scheduled publishing. An active book is in the parent catalog from `live_from` until
-- `live_until` (NULL: no bound), evaluated against the clock on every read, so it goes live and
-- leaves at the instant with no job that could be late. Staff set explicit times (`publish_at`,
-- `unpublish_at`) or `auto_publish`: live from its first rights window's start until its last
-- window's end (no end while any window is open-ended). The live bounds are kept by triggers.
ALTER TABLE books
    ADD COLUMN publish_at timestamptz,
    ADD COLUMN unpublish_at timestamptz,
    ADD COLUMN auto_publish boolean NOT NULL DEFAULT false,
    ADD COLUMN live_from timestamptz,
    ADD COLUMN live_until timestamptz,
    ADD CONSTRAINT books_schedule_order CHECK (unpublish_at IS NULL OR publish_at IS NULL OR unpublish_at > publish_at);

CREATE OR REPLACE FUNCTION storytime_book_live_bounds() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.auto_publish THEN
        SELECT min(starts_at), CASE WHEN bool_or(ends_at IS NULL) THEN NULL ELSE max(ends_at) END
          INTO NEW.live_from, NEW.live_until FROM rights_windows WHERE book_id = NEW.id;
        -- Without any window an auto-published book is not live.
        IF NOT FOUND OR NEW.live_from IS NULL THEN
            NEW.live_from := 'infinity';
            NEW.live_until := NULL;
        END IF;
    ELSE
        NEW.live_from := NEW.publish_at;
        NEW.live_until := NEW.unpublish_at;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER books_live_bounds BEFORE INSERT OR UPDATE OF publish_at, unpublish_at, auto_publish, live_from, live_until ON books
    FOR EACH ROW EXECUTE FUNCTION storytime_book_live_bounds();

-- A window change moves the bounds of its auto-published book (the update re-runs the trigger above).
CREATE OR REPLACE FUNCTION storytime_windows_live_bounds() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE books b SET live_from = NULL
     WHERE b.auto_publish AND b.id IN (SELECT book_id FROM changed_rows);
    RETURN NULL;
END $$;
CREATE TRIGGER rights_windows_live_insert AFTER INSERT ON rights_windows REFERENCING NEW TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_windows_live_bounds();
CREATE TRIGGER rights_windows_live_update_new AFTER UPDATE ON rights_windows REFERENCING NEW TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_windows_live_bounds();
CREATE TRIGGER rights_windows_live_delete AFTER DELETE ON rights_windows REFERENCING OLD TABLE AS changed_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_windows_live_bounds();

CREATE INDEX books_live_from_idx ON books (live_from) WHERE live_from IS NOT NULL AND status = 'active';
CREATE INDEX books_live_until_idx ON books (live_until) WHERE live_until IS NOT NULL AND status = 'active';

-- Scheduled transitions recorded in the audit log once each (instances race to write them).
CREATE UNIQUE INDEX audit_log_schedule_once ON audit_log (record_id, action, (after->>'at')) WHERE table_name = 'books' AND action LIKE 'scheduled:%';
