ALTER TABLE studies DROP COLUMN IF EXISTS exclude_studies;
