DROP TRIGGER IF EXISTS studies_closed_at ON studies;
DROP FUNCTION IF EXISTS studies_closed_at();
ALTER TABLE studies DROP COLUMN IF EXISTS retention_days, DROP COLUMN IF EXISTS closed_at;
