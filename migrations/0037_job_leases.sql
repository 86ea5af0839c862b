-- The background jobs that run on one instance at a time (Sources/App/Jobs.swift) hold a lease
-- here while they run: taken by one short statement, released when the run ends, and expired
-- after `until` if its instance died. (An advisory lock held in a transaction kept a pool
-- connection for the whole run, and the run's own statements waited for the pool: with one
-- connection per event loop, mail and webhook delivery deadlocked.)
CREATE TABLE job_leases (
    name    text PRIMARY KEY,
    holder  text NOT NULL,
    until   timestamptz NOT NULL
);
