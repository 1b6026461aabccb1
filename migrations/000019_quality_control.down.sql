DROP TABLE IF EXISTS gold_triplets;
DROP TABLE IF EXISTS trial_answers;
-- Catch and repeat questions go (a participant holding one holds none);
-- participants.answered keeps counting the trials and skips they answered.
UPDATE participants SET open_question = NULL
WHERE open_question IN (SELECT id FROM questions WHERE design IN ('catch', 'repeat'));
DELETE FROM questions WHERE design IN ('catch', 'repeat');
DROP INDEX IF EXISTS questions_comparison_once;
CREATE UNIQUE INDEX questions_comparison_once
    ON questions (participant_id, anchor, least(left_idx, right_idx), greatest(left_idx, right_idx))
    WHERE design <> 'import';
ALTER TABLE questions DROP CONSTRAINT IF EXISTS questions_options;
ALTER TABLE questions ADD CONSTRAINT questions_check CHECK (anchor <> left_idx AND anchor <> right_idx AND left_idx <> right_idx);
ALTER TABLE questions DROP COLUMN IF EXISTS expected;
ALTER TABLE studies DROP COLUMN IF EXISTS quality;
