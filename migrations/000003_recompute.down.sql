DROP TABLE IF EXISTS recompute_runs;
DROP TABLE IF EXISTS recompute_settings;
DROP INDEX IF EXISTS questions_comparison_once;
DELETE FROM answers WHERE question_id IN (SELECT id FROM questions WHERE design = 'import');
DELETE FROM questions WHERE design = 'import';
CREATE UNIQUE INDEX questions_comparison_once
    ON questions (participant_id, anchor, least(left_idx, right_idx), greatest(left_idx, right_idx));
DELETE FROM items WHERE data IS NULL;
ALTER TABLE items DROP CONSTRAINT IF EXISTS items_image_or_label;
ALTER TABLE items ALTER COLUMN data SET NOT NULL;
ALTER TABLE participants DROP COLUMN IF EXISTS excluded_at;
