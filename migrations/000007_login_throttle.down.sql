ALTER TABLE sessions
    DROP COLUMN IF EXISTS address,
    DROP COLUMN IF EXISTS user_agent,
    DROP COLUMN IF EXISTS last_seen_at,
    DROP COLUMN IF EXISTS id;
DROP TABLE IF EXISTS login_throttles;
