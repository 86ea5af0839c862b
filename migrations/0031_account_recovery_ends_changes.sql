-- Account recovery ends pending email changes (docs/security.md, round 4).
--
-- `parents.security_stamp` counts the account's security events: a new password (changed or
-- reset), a confirmed or changed address, a lock or unlock, and "sign out everywhere" (which bumps
-- it itself). A link confirming a new address carries the stamp it was asked at and is used only
-- while the stamp is unchanged; each bump also deletes, in the same transaction, every pending
-- change, and an address change deletes every unused link mailed to another address (a reset
-- link in the old mailbox ends with it). Done in the database, so the API, the console and the
-- command line all obey.

ALTER TABLE parents ADD COLUMN security_stamp bigint NOT NULL DEFAULT 0;
-- The stamp an `email` link was asked at (NULL for the other purposes).
ALTER TABLE account_tokens ADD COLUMN stamp bigint;

-- Changes parked before now were bound to nothing: they end (the family can ask again).
DELETE FROM account_tokens WHERE purpose = 'email' AND used_at IS NULL;

CREATE OR REPLACE FUNCTION storytime_parent_security_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.security_stamp := greatest(NEW.security_stamp, OLD.security_stamp + 1);
    RETURN NEW;
END $$;

CREATE TRIGGER parents_security_stamp BEFORE UPDATE OF email, password_hash, email_verified_at, locked_at ON parents
    FOR EACH ROW
    WHEN (OLD.email IS DISTINCT FROM NEW.email OR OLD.password_hash IS DISTINCT FROM NEW.password_hash
          OR OLD.email_verified_at IS DISTINCT FROM NEW.email_verified_at OR OLD.locked_at IS DISTINCT FROM NEW.locked_at)
    EXECUTE FUNCTION storytime_parent_security_stamp();

CREATE OR REPLACE FUNCTION storytime_parent_end_pending_links() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM account_tokens
     WHERE parent_id = NEW.id AND used_at IS NULL
       AND (purpose = 'email' OR (OLD.email IS DISTINCT FROM NEW.email AND lower(email) <> lower(NEW.email)));
    RETURN NULL;
END $$;

CREATE TRIGGER parents_end_pending_links AFTER UPDATE ON parents
    FOR EACH ROW
    WHEN (OLD.security_stamp IS DISTINCT FROM NEW.security_stamp)
    EXECUTE FUNCTION storytime_parent_end_pending_links();
