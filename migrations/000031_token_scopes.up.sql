-- Issue 30: an API token names the studies it may touch (all the account
-- may see, or a list) and its rights: read results, export identifying
-- data, write. Tokens made before keep what they could do: everything
-- their account could.
ALTER TABLE api_tokens
    ADD COLUMN all_studies  boolean NOT NULL DEFAULT true,
    ADD COLUMN can_read     boolean NOT NULL DEFAULT true,
    ADD COLUMN can_identify boolean NOT NULL DEFAULT true,
    ADD COLUMN can_write    boolean NOT NULL DEFAULT true;

CREATE TABLE api_token_studies (
    token_id bigint NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
    study_id bigint NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    PRIMARY KEY (token_id, study_id)
);
-- The purge empties it by study (store.purgeTables).
CREATE INDEX api_token_studies_study ON api_token_studies (study_id, token_id);
