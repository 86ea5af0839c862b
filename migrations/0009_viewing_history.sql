-- Viewing history and insights: plays read per child and book in time order (rewatches, the last
-- position, recomputing last_played_at), and where a book's rights run out.
CREATE INDEX plays_child_book_played_idx ON plays (child_id, book_id, played_at, id);
-- "Had the child completed this book before this play?" is one probe of this one.
CREATE INDEX plays_completed_idx ON plays (child_id, book_id, played_at, id) WHERE completed;

-- The instant a book's rights stop being available, looking from `at`: the end of the window
-- covering `at`, followed through windows that begin before it ends (back-to-back or overlapping
-- windows are one stretch). NULL when nothing covers `at` or the stretch has no end.
CREATE OR REPLACE FUNCTION storytime_rights_ends_at(book bigint, at timestamptz) RETURNS timestamptz
    LANGUAGE plpgsql STABLE AS $$
DECLARE
    stretch_end timestamptz;
    further timestamptz;
    open_ended boolean;
BEGIN
    SELECT max(ends_at), bool_or(ends_at IS NULL) INTO stretch_end, open_ended
      FROM rights_windows WHERE book_id = book AND starts_at <= at AND (ends_at IS NULL OR ends_at > at);
    IF open_ended OR stretch_end IS NULL THEN
        RETURN NULL;
    END IF;
    LOOP
        SELECT max(ends_at), bool_or(ends_at IS NULL) INTO further, open_ended
          FROM rights_windows WHERE book_id = book AND starts_at <= stretch_end AND (ends_at IS NULL OR ends_at > stretch_end);
        IF open_ended THEN
            RETURN NULL;
        END IF;
        IF further IS NULL THEN
            RETURN stretch_end;
        END IF;
        stretch_end := further;
    END LOOP;
END $$;

-- Per child: how many plays, and a counter moved by every change to its plays or library, so a
-- history's total and a statistics cache check are one row read (triggers in the writer's
-- transaction, statement-level, so a bulk insert of 10,000 plays is one update per child).
ALTER TABLE children ADD COLUMN plays_count bigint NOT NULL DEFAULT 0;
ALTER TABLE children ADD COLUMN activity bigint NOT NULL DEFAULT 0;
UPDATE children c SET plays_count = (SELECT count(*) FROM plays p WHERE p.child_id = c.id);

CREATE OR REPLACE FUNCTION storytime_child_activity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        UPDATE children c SET activity = c.activity + 1,
                              plays_count = c.plays_count + CASE WHEN TG_TABLE_NAME = 'plays' THEN n.count ELSE 0 END
          FROM (SELECT child_id, count(*) AS count FROM new_rows GROUP BY child_id) n WHERE c.id = n.child_id;
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE children c SET activity = c.activity + 1,
                              plays_count = c.plays_count - CASE WHEN TG_TABLE_NAME = 'plays' THEN o.count ELSE 0 END
          FROM (SELECT child_id, count(*) AS count FROM old_rows GROUP BY child_id) o WHERE c.id = o.child_id;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER plays_activity_insert AFTER INSERT ON plays REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_child_activity();
CREATE TRIGGER plays_activity_update AFTER UPDATE ON plays REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_child_activity();
CREATE TRIGGER plays_activity_delete AFTER DELETE ON plays REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_child_activity();
CREATE TRIGGER library_activity_insert AFTER INSERT ON library_entries REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_child_activity();
CREATE TRIGGER library_activity_update AFTER UPDATE ON library_entries REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_child_activity();
CREATE TRIGGER library_activity_delete AFTER DELETE ON library_entries REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_child_activity();
