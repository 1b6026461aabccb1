-- Tokens given on resuming are dropped: those browsers must join again.
DROP TABLE IF EXISTS participant_tokens;
DROP INDEX IF EXISTS participants_external_key;
ALTER TABLE participants DROP COLUMN IF EXISTS external_key;
