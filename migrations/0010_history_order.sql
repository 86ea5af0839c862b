-- A child's history is read newest first with the play id as the tie-break: an index in exactly
-- that order lets a page stop after its rows instead of sorting every play of the same instant
-- group (it replaces the index on (child_id, played_at DESC), which it covers).
CREATE INDEX plays_child_history_idx ON plays (child_id, played_at DESC, id DESC);
DROP INDEX plays_child_played_idx;
