DROP TABLE IF EXISTS design_inbox;
DROP TABLE IF EXISTS design_pool;
ALTER TABLE studies DROP COLUMN IF EXISTS version;
ALTER TABLE questions ADD COLUMN answered_at timestamptz;
UPDATE questions q SET answered_at = a.answered_at FROM answers a WHERE a.question_id = q.id;
-- Questions issued but never answered and no longer held (a participant
-- holds one at most) are closed as answered when they were issued.
UPDATE questions q SET answered_at = q.issued_at
WHERE q.answered_at IS NULL AND NOT EXISTS (SELECT 1 FROM participants p WHERE p.open_question = q.id);
CREATE UNIQUE INDEX questions_one_open ON questions (participant_id) WHERE answered_at IS NULL;
ALTER TABLE participants RESET (fillfactor);
ALTER TABLE participants DROP COLUMN IF EXISTS open_question, DROP COLUMN IF EXISTS answered;
