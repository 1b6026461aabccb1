-- closer: brute-force protection on the admin login and a list of each
-- admin's sessions (issue 11).

-- Failed-login counters shared by every replica. key is 'account:' and the
-- sha256 of the normalised e-mail (whether or not such an admin exists; the
-- typed text itself is not kept), or 'address:' and the client's IP address
-- (IPv6: its /64). A row is forgotten at forget_at.
CREATE TABLE login_throttles (
    key             text PRIMARY KEY,
    failures        integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
    last_failure_at timestamptz,
    blocked_until   timestamptz,
    forget_at       timestamptz NOT NULL
);
CREATE INDEX login_throttles_forget_at ON login_throttles (forget_at);

-- Sessions get a public id (to list and revoke them without showing the
-- token's hash), when they were last used, and the browser's user agent and
-- address at login: shown to the admin only, deleted with the session.
ALTER TABLE sessions
    ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    ADD COLUMN last_seen_at timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN user_agent text NOT NULL DEFAULT '',
    ADD COLUMN address text NOT NULL DEFAULT '';
-- (sessions.admin_id is indexed by sessions_admin, migration 000006.)
