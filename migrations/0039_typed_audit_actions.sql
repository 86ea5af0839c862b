-- The staff audit log's actions are typed (docs/console.md, "Audit log"): `kind` says what an
-- audited change was, one of the values of the app's `AuditAction` (Sources/App/Admin/Audit),
-- and a CHECK refuses any other. `action` keeps the words the audit page and the webhooks'
-- `by`/`change` show ("batch: set_status", "revert #12"), written by the app from the kind;
-- nothing reads them to decide anything any more: the revert, the webhook trigger, the review
-- authors' trigger and the scheduled transitions' unique index go by the kind.
--
-- The rows already written get the kind their words name (every action the app has written).
-- Words that fit none — a row typed in by hand — get `legacy`: shown as written, never reverted;
-- a second CHECK keeps `legacy` to those rows (by id), so no new row can have it.
-- The backfill rewrites the table once (an import writes a row per book: allow for its size).

ALTER TABLE audit_log ADD COLUMN kind text;

UPDATE audit_log SET kind = CASE
    WHEN action IN ('create', 'update', 'delete', 'password_change', 'password_reset') THEN action
    WHEN action LIKE 'batch: %' THEN 'batch'
    WHEN action ~ '^revert #[0-9]+$' THEN 'revert'
    WHEN action ~ '^import #[0-9]+$' THEN 'import'
    WHEN action = 'cover upload' THEN 'cover_upload'
    WHEN action = 'cover removal' THEN 'cover_removal'
    WHEN action = 'review: submitted' THEN 'review_submitted'
    WHEN action = 'review: approved' THEN 'review_approved'
    WHEN action = 'review: returned' THEN 'review_returned'
    WHEN action = 'scheduled: went live' THEN 'scheduled_live'
    WHEN action = 'scheduled: left the catalog' THEN 'scheduled_left'
    WHEN action LIKE 'pipeline: %' THEN 'pipeline'
    WHEN action LIKE 'pipeline replay: %' THEN 'pipeline_replay'
    WHEN action = 'two-factor: enabled' THEN 'two_factor_enabled'
    WHEN action = 'two-factor: new recovery codes' THEN 'two_factor_new_codes'
    WHEN action = 'two-factor: disabled' THEN 'two_factor_disabled'
    WHEN action = 'two-factor: reset by an admin' THEN 'two_factor_reset'
    WHEN action = 'two-factor: recovery code used' THEN 'two_factor_recovery_used'
    WHEN action = 'api token: created' THEN 'api_token_created'
    WHEN action = 'api token: revoked' THEN 'api_token_revoked'
    WHEN action = 'webhook: redeliver' THEN 'webhook_redeliver'
    WHEN action = 'preview as a family' THEN 'preview'
    ELSE 'legacy'
END;

ALTER TABLE audit_log
    ALTER COLUMN kind SET NOT NULL,
    ADD CONSTRAINT audit_log_kind CHECK (kind IN (
        'create', 'update', 'delete', 'batch', 'revert', 'import',
        'cover_upload', 'cover_removal', 'review_submitted', 'review_approved', 'review_returned',
        'scheduled_live', 'scheduled_left', 'pipeline', 'pipeline_replay',
        'password_change', 'password_reset',
        'two_factor_enabled', 'two_factor_new_codes', 'two_factor_disabled', 'two_factor_reset', 'two_factor_recovery_used',
        'api_token_created', 'api_token_revoked', 'webhook_redeliver', 'preview', 'legacy'));
-- `legacy` only on the rows it was given here (an id no new row gets: the identity runs above).
DO $$
BEGIN
    EXECUTE format('ALTER TABLE audit_log ADD CONSTRAINT audit_log_kind_legacy CHECK (kind <> %L OR id <= %s)',
                   'legacy', COALESCE((SELECT max(id) FROM audit_log WHERE kind = 'legacy'), 0));
END $$;

-- One row per scheduled transition, by kind (was: `action LIKE 'scheduled:%'`).
DROP INDEX audit_log_schedule_once;
CREATE UNIQUE INDEX audit_log_schedule_once ON audit_log (record_id, kind, (after->>'at'))
    WHERE table_name = 'books' AND kind IN ('scheduled_live', 'scheduled_left');

-- As in 0030, deciding by the kind; the payloads' `by` and `change` keep the words.
CREATE OR REPLACE FUNCTION storytime_webhook_from_audit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    book bigint;
    was_active boolean;
    is_active boolean;
    live_from timestamptz;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE active) THEN RETURN NULL; END IF;
    IF NEW.table_name = 'rights_windows' THEN
        book := COALESCE(NEW.after->>'book_id', NEW.before->>'book_id')::bigint;
        PERFORM storytime_webhook_enqueue('book.rights_changed', jsonb_build_object('book_id', book, 'change', NEW.action));
        RETURN NULL;
    END IF;
    IF NEW.kind = 'scheduled_live' THEN
        PERFORM storytime_webhook_enqueue('book.went_live', jsonb_build_object('book_id', NEW.record_id, 'at', NEW.after->'at', 'by', 'schedule'));
        RETURN NULL;
    ELSIF NEW.kind = 'scheduled_left' THEN
        PERFORM storytime_webhook_enqueue('book.left', jsonb_build_object('book_id', NEW.record_id, 'at', NEW.after->'at', 'by', 'schedule'));
        RETURN NULL;
    END IF;
    was_active := COALESCE(NEW.before->>'status' = 'active', false);
    is_active := COALESCE(NEW.after->>'status' = 'active', false);
    live_from := NULLIF(NEW.after->>'live_from', 'infinity')::timestamptz;
    IF is_active AND NOT was_active AND (live_from IS NULL AND NEW.after->>'live_from' IS NULL OR live_from <= now()) THEN
        PERFORM storytime_webhook_enqueue('book.went_live', jsonb_build_object('book_id', NEW.record_id, 'title', NEW.after->>'title', 'by', NEW.action));
    ELSIF was_active AND NOT is_active THEN
        PERFORM storytime_webhook_enqueue('book.left', jsonb_build_object('book_id', NEW.record_id, 'title', COALESCE(NEW.after, NEW.before)->>'title', 'by', NEW.action));
    END IF;
    IF NEW.before IS NOT NULL AND NEW.after IS NOT NULL AND NEW.before ? 'rights_windows' AND NEW.after ? 'rights_windows'
       AND NEW.before->'rights_windows' IS DISTINCT FROM NEW.after->'rights_windows' THEN
        PERFORM storytime_webhook_enqueue('book.rights_changed', jsonb_build_object('book_id', NEW.record_id, 'change', NEW.action));
    END IF;
    RETURN NULL;
END $$;

-- As in 0036, a cover's upload or removal named by its kind.
CREATE OR REPLACE FUNCTION storytime_review_authors_from_audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO book_review_authors (book_id, staff_user_id)
    SELECT DISTINCT n.record_id, n.staff_user_id
      FROM new_rows n JOIN books b ON b.id = n.record_id
     WHERE n.table_name = 'books' AND n.staff_user_id IS NOT NULL AND n.after IS NOT NULL
       AND (n.before IS NULL
            OR n.kind IN ('cover_upload', 'cover_removal')
            OR (n.before->>'title', n.before->>'author', n.before->>'description', n.before->>'age_min', n.before->>'age_max',
                n.before->>'language', n.before->>'cover_image_url', n.before->>'publisher_id', n.before->>'category_ids')
               IS DISTINCT FROM
               (n.after->>'title', n.after->>'author', n.after->>'description', n.after->>'age_min', n.after->>'age_max',
                n.after->>'language', n.after->>'cover_image_url', n.after->>'publisher_id', n.after->>'category_ids'))
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
