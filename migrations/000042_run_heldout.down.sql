ALTER TABLE recompute_runs DROP COLUMN IF EXISTS heldout_answers;
