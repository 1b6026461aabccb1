-- One participant per external id (PROLIFIC_PID, workerId, ...) per study:
-- the same id joining again resumes that participant instead of creating a
-- second one who would earn a second completion code.
--
-- external_key is the id that joining looks up; it is unique in a study.
-- Studies from before this migration may hold several participants with
-- one external id: the one that completed (else the one with the most
-- answers, else the first) keeps it as its key, the others keep their
-- external_id (exports show it) but no key.
ALTER TABLE participants ADD COLUMN external_key text;
UPDATE participants p SET external_key = p.external_id
FROM (
    SELECT id, row_number() OVER (PARTITION BY study_id, external_id
        ORDER BY completed_at IS NULL, answered DESC, id) AS rank
    FROM participants WHERE external_id IS NOT NULL
) r
WHERE r.id = p.id AND r.rank = 1;
CREATE UNIQUE INDEX participants_external_key ON participants (study_id, external_key);

-- A participant resumed in another browser gets a token of its own there;
-- the first token stays in participants.token_hash, later ones are here.
CREATE TABLE participant_tokens (
    token_hash     bytea PRIMARY KEY,
    participant_id bigint NOT NULL REFERENCES participants (id) ON DELETE CASCADE,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX participant_tokens_participant ON participant_tokens (participant_id);
