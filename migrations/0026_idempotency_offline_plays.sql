-- Idempotency-Key on the parent API's POST and DELETE: the first answer per account and key,
-- kept 24 hours and replayed byte for byte. `status` is null while the first request is in
-- flight (held until `locked_until`, so a crashed instance's claim lapses).
CREATE TABLE idempotency_keys (
    parent_id     bigint NOT NULL REFERENCES parents (id) ON DELETE CASCADE,
    key           text NOT NULL CONSTRAINT idempotency_keys_key_length CHECK (length(key) BETWEEN 1 AND 255),
    fingerprint   bytea NOT NULL,
    status        integer,
    headers       jsonb,
    body          bytea,
    created_at    timestamptz NOT NULL DEFAULT now(),
    locked_until  timestamptz,
    PRIMARY KEY (parent_id, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

-- Offline plays: the client's id of each play sent through POST .../plays/batch, kept for good
-- per child (a play folded into totals by retention still counts as received), with the result
-- it got, so a batch sent twice records each play once.
CREATE TABLE play_receipts (
    child_id     bigint NOT NULL REFERENCES children (id) ON DELETE CASCADE,
    client_id    text NOT NULL CONSTRAINT play_receipts_client_id_length CHECK (length(client_id) BETWEEN 1 AND 100),
    result       text NOT NULL,
    received_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (child_id, client_id)
);
