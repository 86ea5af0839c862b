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
