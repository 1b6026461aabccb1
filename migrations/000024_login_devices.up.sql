-- Browsers that logged in to an admin account (issue 24): a browser that
-- presents the token of a device cookie set at a successful login of that
-- account is not held by the account's login throttle, so that a stranger
-- who fails on purpose cannot lock the admin out. Only the token's sha256
-- is stored; account_key is the login throttle's key of the e-mail.
CREATE TABLE login_devices (
    token_hash    bytea NOT NULL,
    account_key   text NOT NULL,
    last_login_at timestamptz NOT NULL,
    PRIMARY KEY (token_hash, account_key)
);
CREATE INDEX login_devices_account ON login_devices (account_key, last_login_at);
