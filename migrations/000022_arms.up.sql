-- closer: arms, the held-out share and the active design (issue 16).
--
-- 1. A study may run several designs at once, "arms" (studies.arms: a JSON
-- list of {name, design, config, share}; empty for a study of one design,
-- which is its one implicit arm 0: studies.design and design_config). With
-- arms, studies.design and design_config repeat the first arm's, so that
-- what reads a study's design alone reads arm 0. heldout_share is the
-- share of every participant's questions that are held out: uniformly
-- random comparisons recorded with design 'heldout', kept out of the votes
-- and of every design, the study's common test set. Both are frozen once
-- the study issued its first question, as the design's settings are.
ALTER TABLE studies
    ADD COLUMN arms jsonb NOT NULL DEFAULT '[]',
    ADD COLUMN heldout_share double precision NOT NULL DEFAULT 0
        CHECK (heldout_share >= 0 AND heldout_share <= 0.5);

-- 2. Each participant is assigned to an arm when they join (0 in a study
-- without arms) and keeps it. arm_counts holds, for a study with arms
-- only, how many participants each arm has: a join locks the study's one
-- row, assigns the next participant by the arms' shares from the counts
-- (design.NextArm) and adds one, so concurrent joins take turns on that
-- row alone and every join costs the same, however many joined before.
ALTER TABLE participants ADD COLUMN arm smallint NOT NULL DEFAULT 0 CHECK (arm >= 0);

CREATE TABLE arm_counts (
    study_id bigint PRIMARY KEY REFERENCES studies (id) ON DELETE CASCADE,
    counts   integer[] NOT NULL
);

-- 3. Every arm whose design keeps state has a state of its own: the design
-- tables are keyed by (study, arm), and every statement of a design names
-- its arm. Existing rows are arm 0.
ALTER TABLE design_events DROP CONSTRAINT design_events_study_id_fkey;
ALTER TABLE design_states ADD COLUMN arm smallint NOT NULL DEFAULT 0,
    DROP CONSTRAINT design_states_pkey,
    ADD CONSTRAINT design_states_pkey PRIMARY KEY (study_id, arm);
ALTER TABLE design_events ADD COLUMN arm smallint NOT NULL DEFAULT 0,
    DROP CONSTRAINT design_events_pkey,
    ADD CONSTRAINT design_events_pkey PRIMARY KEY (study_id, arm, version),
    ADD CONSTRAINT design_events_state_fkey FOREIGN KEY (study_id, arm)
        REFERENCES design_states (study_id, arm) ON DELETE CASCADE;

ALTER TABLE design_pool ADD COLUMN arm smallint NOT NULL DEFAULT 0,
    DROP CONSTRAINT design_pool_pkey,
    ADD CONSTRAINT design_pool_pkey PRIMARY KEY (study_id, arm, anchor, j, k);
DROP INDEX design_pool_order;
CREATE INDEX design_pool_order ON design_pool (study_id, arm, band, prio);

-- A lease stays keyed by (participant, comparison): a participant is in
-- one arm.
ALTER TABLE design_leases ADD COLUMN arm smallint NOT NULL DEFAULT 0;
DROP INDEX design_leases_study;
CREATE INDEX design_leases_study ON design_leases (study_id, arm, anchor, j, k);
DROP INDEX design_leases_expiry;
CREATE INDEX design_leases_expiry ON design_leases (study_id, arm, expires_at);

ALTER TABLE design_inbox ADD COLUMN arm smallint NOT NULL DEFAULT 0;
DROP INDEX design_inbox_study;
CREATE INDEX design_inbox_study ON design_inbox (study_id, arm, id);
