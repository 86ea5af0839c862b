-- A staff user's console sessions end at once when their role or password changes or the user
-- is removed, whoever makes the change (the console, the command line, SQL).
CREATE INDEX admin_sessions_staff_idx ON admin_sessions ((data->>'staffUserID'));

CREATE OR REPLACE FUNCTION storytime_end_staff_sessions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM admin_sessions WHERE data->>'staffUserID' = OLD.id::text;
    RETURN NULL;
END $$;

CREATE TRIGGER staff_users_end_sessions_on_change AFTER UPDATE OF role, password_hash ON staff_users
    FOR EACH ROW WHEN (OLD.role IS DISTINCT FROM NEW.role OR OLD.password_hash IS DISTINCT FROM NEW.password_hash)
    EXECUTE FUNCTION storytime_end_staff_sessions();
CREATE TRIGGER staff_users_end_sessions_on_delete AFTER DELETE ON staff_users
    FOR EACH ROW EXECUTE FUNCTION storytime_end_staff_sessions();
