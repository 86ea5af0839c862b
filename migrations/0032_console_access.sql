-- The console's access control, round 4 (issue 43: findings 2, 6 and 14).

-- 1. The Outbox never holds a usable link for staff to read. What the console shows is
-- `display_text`, written with the mail by a trigger (whoever writes it) with every link and every
-- token-like word replaced; SMTP still gets the real bodies, which are emptied once the mail is
-- delivered or has failed for good (nothing needs them after that).
CREATE OR REPLACE FUNCTION storytime_redacted_mail(body text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT regexp_replace(regexp_replace(body, '[A-Za-z][A-Za-z0-9+.-]*://[^[:space:]<>"]+', '[link not shown]', 'g'),
                          '[A-Za-z0-9_~.%+/=-]{20,}', '[not shown]', 'g')
$$;

ALTER TABLE mail_outbox ADD COLUMN display_text text;
UPDATE mail_outbox SET display_text = storytime_redacted_mail(text_body);
UPDATE mail_outbox SET text_body = '', html_body = '' WHERE sent_at IS NOT NULL OR failed_at IS NOT NULL;
ALTER TABLE mail_outbox ALTER COLUMN display_text SET NOT NULL;

CREATE OR REPLACE FUNCTION storytime_mail_outbox_redact() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' OR NEW.text_body IS DISTINCT FROM OLD.text_body THEN
        NEW.display_text := storytime_redacted_mail(NEW.text_body);
    END IF;
    IF NEW.sent_at IS NOT NULL OR NEW.failed_at IS NOT NULL THEN
        NEW.text_body := '';
        NEW.html_body := '';
        IF TG_OP = 'UPDATE' THEN NEW.display_text := OLD.display_text; END IF;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER mail_outbox_redact BEFORE INSERT OR UPDATE ON mail_outbox
    FOR EACH ROW EXECUTE FUNCTION storytime_mail_outbox_redact();

-- 2. Staff accounts can be locked (an admin's batch action): no sign-in, sessions and tokens end.
ALTER TABLE staff_users ADD COLUMN locked_at timestamptz;

-- 3. A staff API token acts with the lower of the role its owner had when it was made and their
-- role now, and ends when its owner's password changes, their second factor is removed or
-- replaced, they are demoted or locked (whoever makes the change: console, command line, SQL).
ALTER TABLE staff_api_tokens ADD COLUMN role text;
UPDATE staff_api_tokens k SET role = u.role FROM staff_users u WHERE u.id = k.staff_user_id;
ALTER TABLE staff_api_tokens ALTER COLUMN role SET NOT NULL,
    ADD CONSTRAINT staff_api_tokens_role_check CHECK (role IN ('admin', 'editor', 'viewer'));

CREATE OR REPLACE FUNCTION storytime_staff_rank(role text) RETURNS integer LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE role WHEN 'admin' THEN 2 WHEN 'editor' THEN 1 ELSE 0 END
$$;

CREATE OR REPLACE FUNCTION storytime_end_staff_tokens() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE staff_api_tokens SET revoked_at = now() WHERE staff_user_id = NEW.id AND revoked_at IS NULL;
    RETURN NULL;
END $$;
CREATE TRIGGER staff_users_end_tokens AFTER UPDATE ON staff_users
    FOR EACH ROW WHEN (OLD.password_hash IS DISTINCT FROM NEW.password_hash
                       OR (OLD.totp_enabled_at IS NOT NULL AND (NEW.totp_enabled_at IS NULL OR NEW.totp_secret IS DISTINCT FROM OLD.totp_secret))
                       OR storytime_staff_rank(NEW.role) < storytime_staff_rank(OLD.role)
                       OR (NEW.locked_at IS NOT NULL AND OLD.locked_at IS NULL))
    EXECUTE FUNCTION storytime_end_staff_tokens();

-- A lock ends the console sessions too (a role or password change already does, 0012).
CREATE TRIGGER staff_users_end_sessions_on_lock AFTER UPDATE OF locked_at ON staff_users
    FOR EACH ROW WHEN (NEW.locked_at IS NOT NULL AND OLD.locked_at IS NULL)
    EXECUTE FUNCTION storytime_end_staff_sessions();

-- 4. Views shared with all staff are an editor's or an admin's: a viewer's shared views (saved
-- before this rule) become their own.
UPDATE saved_views v SET shared = false FROM staff_users u WHERE u.id = v.staff_user_id AND u.role = 'viewer' AND v.shared;
