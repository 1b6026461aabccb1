ALTER TABLE participants DROP COLUMN IF EXISTS ahead_question;
