-- Security round 4, the parent API's plumbing (docs/security.md).

-- Accounts deleted, by id (ids are never reused): an access token names its account, and every
-- instance refuses a deleted account's tokens — `RevokedSessions` reads the ones ended within a
-- token's lifetime with the signed-out devices, so its cache cannot refill without them (the
-- devices themselves are gone with the account). Written by a trigger: DELETE /me, the console
-- and the command line all leave the mark.
CREATE TABLE ended_accounts (
    parent_id  bigint PRIMARY KEY,
    ended_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ended_accounts_ended_idx ON ended_accounts (ended_at);

CREATE OR REPLACE FUNCTION storytime_parent_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO ended_accounts (parent_id) VALUES (OLD.id)
        ON CONFLICT (parent_id) DO UPDATE SET ended_at = now();
    RETURN OLD;
END $$;

CREATE TRIGGER parents_ended AFTER DELETE ON parents FOR EACH ROW EXECUTE FUNCTION storytime_parent_ended();

-- Idempotency keys belong to the credential that sent them: the parent's account (`parent`) or
-- one child device (`child_device:<device>:<child>`), so a child's tablet neither replays nor
-- blocks the parent's answers.
ALTER TABLE idempotency_keys ADD COLUMN subject text NOT NULL DEFAULT 'parent'
    CONSTRAINT idempotency_keys_subject_length CHECK (length(subject) BETWEEN 1 AND 100);
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys ADD PRIMARY KEY (parent_id, subject, key);

-- The minutes a playback grant may use, reserved from the child's daily budget when it is given
-- (under the child's row lock). A reservation counts, while its grant lives, for its seconds
-- minus what plays of that book recorded since the grant counted; when the grant ends it counts
-- no more (only recorded plays do). `book_id` has no foreign key: a book deleted meanwhile must
-- not make a grant fail.
CREATE TABLE playback_reservations (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    child_id    bigint NOT NULL REFERENCES children (id) ON DELETE CASCADE,
    book_id     bigint NOT NULL,
    grant_id    uuid NOT NULL UNIQUE,
    granted_at  timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    seconds     integer NOT NULL CONSTRAINT playback_reservations_seconds CHECK (seconds >= 0)
);
CREATE INDEX playback_reservations_child_idx ON playback_reservations (child_id, expires_at);
