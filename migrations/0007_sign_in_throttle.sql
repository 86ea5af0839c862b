-- Sign-in throttling for staff and parents alike: one counter per (scope, key) in a fixed window,
-- incremented atomically *before* the password is checked (ON CONFLICT takes the row lock, so 40
-- concurrent guesses get 40 distinct counts). Scopes: parent_email, staff_email, address.
CREATE TABLE login_throttle (
    scope         text NOT NULL,
    key           text NOT NULL,
    window_start  timestamptz NOT NULL DEFAULT now(),
    attempts      integer NOT NULL DEFAULT 0,
    PRIMARY KEY (scope, key)
);
CREATE INDEX login_throttle_window_idx ON login_throttle (window_start);

-- The per-email failure log it replaces (check-then-act: concurrent guesses all passed the check).
DROP TABLE auth_failures;
