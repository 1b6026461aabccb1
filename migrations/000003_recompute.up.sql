-- closer: recompute runs and the results dashboard (issue 6).

-- Excluded participants keep their answers; recompute runs and exports leave
-- them out (exports only unless asked to include them).
ALTER TABLE participants ADD COLUMN excluded_at timestamptz;

-- Items imported from a triplet CSV have a label and no image: data is NULL
-- and content_type is empty. A study with such items cannot be opened to
-- annotators (checked by the application).
ALTER TABLE items ALTER COLUMN data DROP NOT NULL;
ALTER TABLE items ADD CONSTRAINT items_image_or_label CHECK (data IS NOT NULL OR content_type = '');

-- Imported answers may repeat a comparison for one participant (real crowd
-- data does); questions issued by the app still never do.
DROP INDEX questions_comparison_once;
CREATE UNIQUE INDEX questions_comparison_once
    ON questions (participant_id, anchor, least(left_idx, right_idx), greatest(left_idx, right_idx))
    WHERE design <> 'import';

-- The dashboard settings of a study (a study without a row uses the defaults).
CREATE TABLE recompute_settings (
    study_id        bigint PRIMARY KEY REFERENCES studies (id) ON DELETE CASCADE,
    -- Recompute when this many answers arrived since the last run ...
    min_new_answers integer NOT NULL DEFAULT 200 CHECK (min_new_answers >= 1),
    -- ... or when this many seconds passed since it and there is any new answer.
    max_age_seconds integer NOT NULL DEFAULT 600 CHECK (max_age_seconds >= 10),
    method          text NOT NULL DEFAULT 'tste',
    dim             integer NOT NULL DEFAULT 2 CHECK (dim BETWEEN 1 AND 10),
    clusters        integer NOT NULL DEFAULT 0 CHECK (clusters BETWEEN 0 AND 50),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

-- One recompute run: queued/running rows show progress; finished rows keep
-- their results (JSON) and the figures the learning curve needs.
CREATE TABLE recompute_runs (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    study_id      bigint NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    job_id        bigint,
    status        text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'done', 'failed', 'cancelled')),
    stage         text NOT NULL DEFAULT '',
    started_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz,
    duration_ms   integer,
    answers       integer NOT NULL DEFAULT 0,
    items         integer NOT NULL DEFAULT 0,
    settings      jsonb NOT NULL DEFAULT '{}',
    train_error   double precision,
    heldout_error double precision,
    error         text NOT NULL DEFAULT '',
    result        bytea
);
CREATE INDEX recompute_runs_study ON recompute_runs (study_id, id);
