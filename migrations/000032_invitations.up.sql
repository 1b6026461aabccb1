-- Issue 30: an owner invites a collaborator without an account by e-mail;
-- the link (single use, expiring) lets them set a password. Only the
-- sha256 of the link's secret is stored.
CREATE TABLE invitations (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    token_hash bytea NOT NULL UNIQUE,
    email      text NOT NULL,
    study_id   bigint NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    role       text NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    invited_by bigint REFERENCES admins (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz
);
CREATE INDEX invitations_study ON invitations (study_id, id);
-- Deleting an admin sets invited_by to NULL: this index keeps that a probe.
CREATE INDEX invitations_invited_by ON invitations (invited_by);
