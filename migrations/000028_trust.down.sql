DROP TABLE recompute_trust;
ALTER TABLE recompute_settings
    DROP COLUMN trust_max_dim,
    DROP COLUMN trust_folds,
    DROP COLUMN bootstrap_reps,
    DROP COLUMN project,
    DROP COLUMN target_error;
