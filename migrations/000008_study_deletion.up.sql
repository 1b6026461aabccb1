-- closer: deleting a study in the background (issue 11).
--
-- One DELETE of a study with 2 million answers ran its ON DELETE CASCADE
-- row by row for about 39 s, longer than a request may take, so it was
-- cancelled and rolled back: such a study could not be deleted from the app.
-- Now the delete request only marks the study, in one short transaction:
-- deleted_at is set, the status becomes closed (participants get "the study
-- is closed"), and the slug becomes 'deleted:<id>' so that the researcher
-- can give the old one to a new study at once. ':' is not allowed in a
-- live slug, so the name is never taken. Every query of the app leaves
-- marked studies out, and a background job (internal/purge) deletes the
-- study's rows table by table in small batches, each in its own
-- transaction, then the study's row.
ALTER TABLE studies ADD COLUMN deleted_at timestamptz;
ALTER TABLE studies DROP CONSTRAINT studies_slug_check;
ALTER TABLE studies ADD CONSTRAINT studies_slug_check CHECK (
    CASE WHEN deleted_at IS NULL THEN slug ~ '^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$'
         ELSE slug = 'deleted:' || id END);
