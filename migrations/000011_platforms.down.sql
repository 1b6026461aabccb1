ALTER TABLE participants DROP COLUMN IF EXISTS platform_params;
ALTER TABLE studies DROP COLUMN IF EXISTS platform;
