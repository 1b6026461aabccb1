-- What answers cost a study (issue 28's "how many more answers" in a
-- researcher's units): the pay rate per hour of participants' time and
-- the seconds a question takes before the study's own answers measure it.
CREATE TABLE study_costs (
    study_id             bigint PRIMARY KEY REFERENCES studies (id) ON DELETE CASCADE,
    pay_per_hour         double precision NOT NULL DEFAULT 0 CHECK (pay_per_hour >= 0 AND pay_per_hour <= 10000),
    currency             text NOT NULL DEFAULT 'USD' CHECK (length(currency) BETWEEN 1 AND 8),
    seconds_per_question double precision NOT NULL DEFAULT 8 CHECK (seconds_per_question > 0 AND seconds_per_question <= 3600)
);

-- The estimate before a study opens: a simulated crowd answering the
-- study's own settings, its learning curve and the answers it projects.
-- assumed is what the simulation assumed (its inputs), result what it
-- found (JSON of internal/estimate's Result); one row per study, replaced
-- by each new estimate.
CREATE TABLE study_estimates (
    study_id   bigint PRIMARY KEY REFERENCES studies (id) ON DELETE CASCADE,
    assumed    jsonb NOT NULL,
    result     jsonb,
    error      text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now()
);
