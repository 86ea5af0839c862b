-- Rights by territory: a window applies in `territories` (ISO 3166-1 alpha-2 codes; empty =
-- worldwide) except `exclude_territories`. The app validates codes against the ISO list; the
-- database keeps their shape. A parent's `country` decides which windows apply to them (NULL =
-- the instance's DEFAULT_COUNTRY).
ALTER TABLE rights_windows
    ADD COLUMN territories text[] NOT NULL DEFAULT '{}'
        CONSTRAINT rights_windows_territories_format CHECK (array_to_string(territories, ',') ~ '^([A-Z]{2}(,[A-Z]{2})*)?$'),
    ADD COLUMN exclude_territories text[] NOT NULL DEFAULT '{}'
        CONSTRAINT rights_windows_exclude_territories_format CHECK (array_to_string(exclude_territories, ',') ~ '^([A-Z]{2}(,[A-Z]{2})*)?$');

ALTER TABLE parents ADD COLUMN country text CONSTRAINT parents_country_format CHECK (country ~ '^[A-Z]{2}$');

-- Instances keep parents' countries in memory; this moves whenever one changes, and is read in
-- the same statement as the catalog version, so a change is seen by the next request anywhere.
ALTER TABLE catalog_state ADD COLUMN countries_version bigint NOT NULL DEFAULT 0;
CREATE OR REPLACE FUNCTION storytime_bump_countries_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE catalog_state SET countries_version = countries_version + 1 WHERE id;
    RETURN NULL;
END $$;
CREATE TRIGGER parents_country_version AFTER UPDATE OF country ON parents
    FOR EACH STATEMENT EXECUTE FUNCTION storytime_bump_countries_version();

-- Whether a window with these territories applies in `country` (NULL: any country).
CREATE OR REPLACE FUNCTION storytime_window_applies(territories text[], excluded text[], country text) RETURNS boolean
    LANGUAGE sql IMMUTABLE AS $$
    SELECT country IS NULL OR ((cardinality(territories) = 0 OR country = ANY(territories)) AND NOT (country = ANY(excluded)))
$$;

-- storytime_rights_ends_at (0009) for the windows that apply in `country`.
CREATE OR REPLACE FUNCTION storytime_rights_ends_at(book bigint, at timestamptz, country text) RETURNS timestamptz
    LANGUAGE plpgsql STABLE AS $$
DECLARE
    stretch_end timestamptz;
    further timestamptz;
    open_ended boolean;
BEGIN
    SELECT max(ends_at), bool_or(ends_at IS NULL) INTO stretch_end, open_ended
      FROM rights_windows WHERE book_id = book AND starts_at <= at AND (ends_at IS NULL OR ends_at > at)
       AND storytime_window_applies(territories, exclude_territories, country);
    IF open_ended OR stretch_end IS NULL THEN
        RETURN NULL;
    END IF;
    LOOP
        SELECT max(ends_at), bool_or(ends_at IS NULL) INTO further, open_ended
          FROM rights_windows WHERE book_id = book AND starts_at <= stretch_end AND (ends_at IS NULL OR ends_at > stretch_end)
           AND storytime_window_applies(territories, exclude_territories, country);
        IF open_ended THEN
            RETURN NULL;
        END IF;
        IF further IS NULL THEN
            RETURN stretch_end;
        END IF;
        stretch_end := further;
    END LOOP;
END $$;

-- The parent catalog's SQL path asks "does this book have a window limited to territories?"
-- per book: a probe of this index, empty while every window is worldwide.
CREATE INDEX rights_windows_territorial_idx ON rights_windows (book_id) WHERE territories <> '{}' OR exclude_territories <> '{}';
