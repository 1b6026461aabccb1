-- Studies still marked for deletion are deleted now (the cascade deletes
-- their rows): before 000008 nothing would hide them.
DELETE FROM studies WHERE deleted_at IS NOT NULL;
ALTER TABLE studies DROP CONSTRAINT IF EXISTS studies_slug_check;
ALTER TABLE studies DROP COLUMN IF EXISTS deleted_at;
ALTER TABLE studies ADD CONSTRAINT studies_slug_check CHECK (slug ~ '^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$');
