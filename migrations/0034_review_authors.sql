-- Review that one editor cannot get round (security round 4, finding 4). With review required
-- (CONSOLE_REVIEW=on), content families see needs the approval of someone who did not write it:
--  * any content change after an approval ends it, whatever the status (an approved draft
--    edited and made active in the same save is refused, and so is an edit of a live book's
--    content: it goes back to draft, is edited, submitted and approved again);
--  * an approval is refused to whoever submitted the book or changed its content since the last
--    approval (`book_review_authors`, filled from the audit log every console path writes —
--    form, batch, import, revert — and from each submission);
--  * an approval is a pending → approved step by a named reviewer only; any other write of
--    'approved' (SQL, a revert of an old snapshot, an insert) does not approve.
-- The trigger runs on the locked row and reads the authors with a fresh snapshot, so an edit and
-- an approval at the same moment are decided once: the edit first refuses the approval, the
-- approval first is ended by the edit.

-- How many times the reviewed content changed: the review page sends the version it showed, so an
-- approval never covers text its reviewer did not see.
ALTER TABLE books ADD COLUMN content_version integer NOT NULL DEFAULT 0;

CREATE TABLE book_review_authors (
    book_id        bigint NOT NULL REFERENCES books (id) ON DELETE CASCADE,
    staff_user_id  bigint NOT NULL REFERENCES staff_users (id) ON DELETE CASCADE,
    PRIMARY KEY (book_id, staff_user_id)
);

-- Whoever wrote content into a book since its last approval, from the audit rows of the change
-- (written in its transaction, after it). One statement per audit insert, however many books.
CREATE OR REPLACE FUNCTION storytime_review_authors_from_audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO book_review_authors (book_id, staff_user_id)
    SELECT DISTINCT n.record_id, n.staff_user_id
      FROM new_rows n JOIN books b ON b.id = n.record_id
     WHERE n.table_name = 'books' AND n.staff_user_id IS NOT NULL AND n.after IS NOT NULL
       AND (n.before IS NULL
            OR (n.before->>'title', n.before->>'author', n.before->>'description', n.before->>'age_min', n.before->>'age_max',
                n.before->>'language', n.before->>'cover_image_url')
               IS DISTINCT FROM
               (n.after->>'title', n.after->>'author', n.after->>'description', n.after->>'age_min', n.after->>'age_max',
                n.after->>'language', n.after->>'cover_image_url'))
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
CREATE TRIGGER audit_log_review_authors AFTER INSERT ON audit_log REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_review_authors_from_audit();

CREATE OR REPLACE FUNCTION storytime_review_gate() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    changed boolean := false;
BEGIN
    IF TG_OP = 'INSERT' THEN
        -- A new row's content was never approved as this row (a restored snapshot included).
        IF NEW.review_state = 'approved' THEN
            NEW.review_state := NULL; NEW.reviewed_by := NULL; NEW.reviewed_at := NULL;
        END IF;
        NEW.content_version := 0;
    ELSE
        changed := (NEW.title, NEW.author, NEW.description, NEW.age_min, NEW.age_max, NEW.language, NEW.cover_image_url)
                   IS DISTINCT FROM (OLD.title, OLD.author, OLD.description, OLD.age_min, OLD.age_max, OLD.language, OLD.cover_image_url);
        NEW.content_version := OLD.content_version + CASE WHEN changed THEN 1 ELSE 0 END;
        IF NEW.review_state = 'approved' AND OLD.review_state IS DISTINCT FROM 'approved' THEN
            IF OLD.review_state IS DISTINCT FROM 'pending' THEN
                -- Not an approval step: the approval is not written.
                NEW.review_state := OLD.review_state; NEW.reviewed_by := OLD.reviewed_by; NEW.reviewed_at := OLD.reviewed_at;
            ELSIF changed OR NEW.reviewed_by IS NULL OR NEW.reviewed_by IS NOT DISTINCT FROM OLD.review_submitted_by
                  OR EXISTS (SELECT 1 FROM book_review_authors WHERE book_id = NEW.id AND staff_user_id = NEW.reviewed_by) THEN
                RAISE EXCEPTION 'book % can only be approved by someone who neither submitted nor edited it since its last approval', NEW.id
                    USING ERRCODE = 'check_violation', CONSTRAINT = 'books_review_approver', TABLE = 'books';
            ELSE
                DELETE FROM book_review_authors WHERE book_id = NEW.id;
            END IF;
        END IF;
        -- Any content change after an approval needs a new one.
        IF changed AND OLD.review_state = 'approved' AND NEW.review_state = 'approved' THEN
            NEW.review_state := NULL; NEW.reviewed_by := NULL; NEW.reviewed_at := NULL;
        END IF;
        IF NEW.review_state = 'pending' AND OLD.review_state IS DISTINCT FROM 'pending' AND NEW.review_submitted_by IS NOT NULL THEN
            INSERT INTO book_review_authors (book_id, staff_user_id) VALUES (NEW.id, NEW.review_submitted_by) ON CONFLICT DO NOTHING;
        END IF;
    END IF;
    IF NEW.status = 'active' AND NEW.review_state IS DISTINCT FROM 'approved'
       AND (TG_OP = 'INSERT' OR OLD.status <> 'active' OR changed)
       AND (SELECT required FROM review_policy) THEN
        RAISE EXCEPTION 'book % is not approved for families', NEW.id
            USING ERRCODE = 'check_violation', CONSTRAINT = 'books_review_approved', TABLE = 'books';
    END IF;
    RETURN NEW;
END $$;
