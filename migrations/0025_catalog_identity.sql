-- Which catalog this is: a random id made once per database, so an engine snapshot written
-- against one database is never loaded by an instance of another that happens to share its
-- schema (two bench databases, staging and production on one disk).
ALTER TABLE catalog_state ADD COLUMN catalog_id uuid NOT NULL DEFAULT gen_random_uuid();
