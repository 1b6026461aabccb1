DROP TABLE IF EXISTS api_token_studies;
ALTER TABLE api_tokens
    DROP COLUMN IF EXISTS all_studies,
    DROP COLUMN IF EXISTS can_read,
    DROP COLUMN IF EXISTS can_identify,
    DROP COLUMN IF EXISTS can_write;
