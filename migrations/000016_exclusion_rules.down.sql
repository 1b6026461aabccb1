ALTER TABLE participants DROP COLUMN IF EXISTS excluded_reason;
ALTER TABLE studies DROP COLUMN IF EXISTS exclusion;
