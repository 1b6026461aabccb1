DROP INDEX IF EXISTS participants_preview;
ALTER TABLE participants DROP COLUMN IF EXISTS preview;
