ALTER TABLE participants DROP COLUMN IF EXISTS last_active_at;
ALTER TABLE studies DROP COLUMN IF EXISTS idle_minutes, DROP COLUMN IF EXISTS max_participants;
