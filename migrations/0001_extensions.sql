-- Extensions the catalog search needs, and an IMMUTABLE unaccent so it can feed a generated column.
-- (unaccent() itself is only STABLE because its dictionary could change; ours never does.)
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS unaccent;

CREATE OR REPLACE FUNCTION storytime_unaccent(text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT public.unaccent('public.unaccent'::regdictionary, $1) $$;

-- updated_at maintained by the database, so psql sessions and bulk updates keep it true.
CREATE OR REPLACE FUNCTION storytime_touch_updated_at() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    NEW.updated_at := now();
    RETURN NEW;
END $$;
