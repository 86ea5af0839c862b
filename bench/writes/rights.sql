-- A rights window's end moved: an open window gets an end five years out, or loses it again
-- (windows already ending within four years are left as they are).
\set id random(1, :books)
UPDATE rights_windows SET ends_at = CASE WHEN ends_at IS NULL THEN now() + interval '5 years' ELSE NULL END
 WHERE book_id = :id AND (ends_at IS NULL OR ends_at > now() + interval '4 years');
