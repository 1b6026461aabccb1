-- The number of held-out answers a run's held-out error was measured on,
-- so that the dashboard's per-run learning curve draws each point's
-- Wilson interval without decoding every run's result. Runs before this
-- migration keep NULL (drawn without an interval).
ALTER TABLE recompute_runs ADD COLUMN heldout_answers integer;
