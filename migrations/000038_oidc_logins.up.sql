-- Issue 30: single sign-on (OIDC). A login begun at the identity
-- provider: the sha256 of its state, its nonce and PKCE verifier, where
-- to go after. The callback takes the row (DELETE ... RETURNING), so a
-- state works once; rows expire after 10 minutes.
CREATE TABLE oidc_logins (
    state_hash bytea PRIMARY KEY,
    nonce      text NOT NULL,
    verifier   text NOT NULL,
    next       text NOT NULL,
    expires_at timestamptz NOT NULL
);
