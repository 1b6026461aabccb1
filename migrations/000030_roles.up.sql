-- Issue 30: one server for many labs. A site administrator sees and
-- manages everything (every admin before this migration becomes one); any
-- other account is a researcher who sees only the studies they hold a role
-- on: owner (everything, deletion, roles), editor, viewer.
ALTER TABLE admins ADD COLUMN site_admin boolean NOT NULL DEFAULT false;
UPDATE admins SET site_admin = true;

CREATE TABLE study_roles (
    study_id   bigint NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    admin_id   bigint NOT NULL REFERENCES admins (id) ON DELETE CASCADE,
    role       text NOT NULL CHECK (role IN ('owner', 'editor', 'viewer')),
    granted_by bigint REFERENCES admins (id) ON DELETE SET NULL,
    granted_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (study_id, admin_id)
);
CREATE INDEX study_roles_admin ON study_roles (admin_id);
-- Deleting an admin sets granted_by to NULL: this index keeps that a probe.
CREATE INDEX study_roles_granted_by ON study_roles (granted_by);
