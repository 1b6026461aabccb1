ALTER TABLE answers DROP COLUMN IF EXISTS listen_ms;
ALTER TABLE studies DROP COLUMN IF EXISTS sound_max_seconds;
