-- Results a researcher can trust and act on (issue 28): what a recompute
-- computes beyond the embedding, bounded per study, and what it found.

-- The cost bounds of a study's runs: d = 1..trust_max_dim by
-- trust_folds-fold cross-validation (0: no dimension choice; 0 folds: 5),
-- bootstrap_reps replicates of the embedding (0: no uncertainty), the
-- learning curve's projection (project) to target_error (0: automatic).
ALTER TABLE recompute_settings
    ADD COLUMN trust_max_dim  integer NOT NULL DEFAULT 5 CHECK (trust_max_dim BETWEEN 0 AND 10),
    ADD COLUMN trust_folds    integer NOT NULL DEFAULT 5 CHECK (trust_folds = 0 OR trust_folds BETWEEN 2 AND 10),
    ADD COLUMN bootstrap_reps integer NOT NULL DEFAULT 100 CHECK (bootstrap_reps BETWEEN 0 AND 1000),
    ADD COLUMN project        boolean NOT NULL DEFAULT true,
    ADD COLUMN target_error   double precision NOT NULL DEFAULT 0 CHECK (target_error >= 0 AND target_error < 1);

-- One finished run's dimension choice, uncertainty and projection
-- (analysis.Trust's parts as JSON; NULL when the run left a part out, the
-- reasons in notes).
CREATE TABLE recompute_trust (
    run_id        bigint PRIMARY KEY REFERENCES recompute_runs (id) ON DELETE CASCADE,
    suggested_dim integer,
    dimensions    jsonb,
    uncertainty   jsonb,
    projection    jsonb,
    notes         jsonb NOT NULL DEFAULT '[]',
    created_at    timestamptz NOT NULL DEFAULT now()
);
