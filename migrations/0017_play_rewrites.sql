-- A child's play log is kept in memory by the app (ChildPlayLogs). Most changes only add plays
-- (ids above every earlier one), which the app can read alone; `plays_rewrites` moves whenever
-- plays are updated or deleted, so the app knows when it must read the child's plays again
-- instead. Kept by the same statement-level trigger as `activity`, in the writer's transaction.
ALTER TABLE children ADD COLUMN plays_rewrites bigint NOT NULL DEFAULT 0;

CREATE OR REPLACE FUNCTION storytime_child_activity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        UPDATE children c SET activity = c.activity + 1,
                              plays_count = c.plays_count + CASE WHEN TG_TABLE_NAME = 'plays' THEN n.count ELSE 0 END
          FROM (SELECT child_id, count(*) AS count FROM new_rows GROUP BY child_id) n WHERE c.id = n.child_id;
    END IF;
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE children c SET activity = c.activity + 1,
                              plays_count = c.plays_count - CASE WHEN TG_TABLE_NAME = 'plays' THEN o.count ELSE 0 END,
                              plays_rewrites = c.plays_rewrites + CASE WHEN TG_TABLE_NAME = 'plays' THEN 1 ELSE 0 END
          FROM (SELECT child_id, count(*) AS count FROM old_rows GROUP BY child_id) o WHERE c.id = o.child_id;
    END IF;
    RETURN NULL;
END $$;
