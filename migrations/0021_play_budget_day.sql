-- Daily minutes are a budget charged on the day a play arrives (README, "Family controls"): a play
-- backdated to yesterday (an offline device catching up) still spends today's minutes, while the
-- history keeps its played_at. Plays recorded before this migration count on their played_at day
-- (recorded_at NULL: no rewrite of the table).
ALTER TABLE plays ADD COLUMN recorded_at timestamptz;
ALTER TABLE plays ALTER COLUMN recorded_at SET DEFAULT now();
CREATE INDEX plays_child_arrival_idx ON plays (child_id, (COALESCE(recorded_at, played_at)));
