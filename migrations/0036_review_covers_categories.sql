-- Review holds everything families see of a book, not only its text (security round 4, finding 4,
-- continued). With review required (CONSOLE_REVIEW=on), a book's uploaded cover (`book_covers`),
-- its categories (`book_categories`) and its publisher (`books.publisher_id`) are reviewed
-- content like its title: parents' blocked categories and publishers depend on them. So, on every
-- write path (form, batch, import, revert, cover upload, SQL):
--  * on an active book such a change is refused, with the error a title change gets
--    (`books_review_approved`), which the form, the batch actions and the import already explain;
--  * on an approved book that is not active yet it ends the approval and moves `content_version`,
--    and whoever made it (from its audit row) may not approve it (`book_review_authors`).
-- A change of a cover or a category is told to the book by moving its `content_version` by one in
-- the same statement; `storytime_review_gate` counts a moved version as a content change. Nothing
-- else writes `content_version` (audit snapshots leave it out, so a revert does not either).
-- Not held: deleting a category or a publisher itself (its books lose it by cascade).

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
                   IS DISTINCT FROM (OLD.title, OLD.author, OLD.description, OLD.age_min, OLD.age_max, OLD.language, OLD.cover_image_url)
                   -- A cover or categories changed (storytime_review_parts_changed).
                   OR NEW.content_version > OLD.content_version
                   -- A publisher chosen or cleared; not its deletion (ON DELETE SET NULL).
                   OR (NEW.publisher_id IS DISTINCT FROM OLD.publisher_id
                       AND NOT (NEW.publisher_id IS NULL AND NOT EXISTS (SELECT 1 FROM publishers p WHERE p.id = OLD.publisher_id)));
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

-- A cover or a category of a book changed: the book's content changed (one statement for all its
-- books, which the gate above then holds to the rule, row by row on the locked rows).
CREATE OR REPLACE FUNCTION storytime_review_parts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
BEGIN
    IF TG_TABLE_NAME = 'book_covers' AND TG_OP = 'UPDATE' THEN
        -- The same image uploaded again changes nothing families see.
        SELECT array_agg(n.book_id) INTO ids FROM new_rows n JOIN old_rows o ON o.book_id = n.book_id
         WHERE (n.files, n.api_json, n.width, n.height, n.dominant_color) IS DISTINCT FROM (o.files, o.api_json, o.width, o.height, o.dominant_color);
    ELSIF TG_OP = 'INSERT' THEN
        SELECT array_agg(DISTINCT book_id) INTO ids FROM new_rows;
    ELSIF TG_OP = 'DELETE' AND TG_TABLE_NAME = 'book_categories' THEN
        -- Rows that go with their category's deletion are left out (see the top of this file).
        SELECT array_agg(DISTINCT o.book_id) INTO ids FROM old_rows o WHERE EXISTS (SELECT 1 FROM categories c WHERE c.id = o.category_id);
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(DISTINCT book_id) INTO ids FROM old_rows;
    ELSE
        SELECT array_agg(DISTINCT x) INTO ids FROM (SELECT book_id AS x FROM new_rows UNION SELECT book_id FROM old_rows) AS u;
    END IF;
    IF ids IS NOT NULL THEN
        UPDATE books SET content_version = content_version + 1 WHERE id = ANY (ids);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER book_categories_review_insert AFTER INSERT ON book_categories REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_review_parts_changed();
CREATE TRIGGER book_categories_review_update AFTER UPDATE ON book_categories REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_review_parts_changed();
CREATE TRIGGER book_categories_review_delete AFTER DELETE ON book_categories REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_review_parts_changed();
CREATE TRIGGER book_covers_review_insert AFTER INSERT ON book_covers REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_review_parts_changed();
CREATE TRIGGER book_covers_review_update AFTER UPDATE ON book_covers REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_review_parts_changed();
CREATE TRIGGER book_covers_review_delete AFTER DELETE ON book_covers REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_review_parts_changed();

-- Whoever changed a book's publisher or categories, or uploaded or removed its cover, is one of
-- its authors since the last approval, as whoever changed its text.
CREATE OR REPLACE FUNCTION storytime_review_authors_from_audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO book_review_authors (book_id, staff_user_id)
    SELECT DISTINCT n.record_id, n.staff_user_id
      FROM new_rows n JOIN books b ON b.id = n.record_id
     WHERE n.table_name = 'books' AND n.staff_user_id IS NOT NULL AND n.after IS NOT NULL
       AND (n.before IS NULL
            OR n.action IN ('cover upload', 'cover removal')
            OR (n.before->>'title', n.before->>'author', n.before->>'description', n.before->>'age_min', n.before->>'age_max',
                n.before->>'language', n.before->>'cover_image_url', n.before->>'publisher_id', n.before->>'category_ids')
               IS DISTINCT FROM
               (n.after->>'title', n.after->>'author', n.after->>'description', n.after->>'age_min', n.after->>'age_max',
                n.after->>'language', n.after->>'cover_image_url', n.after->>'publisher_id', n.after->>'category_ids'))
    ON CONFLICT DO NOTHING;
    RETURN NULL;
END $$;
