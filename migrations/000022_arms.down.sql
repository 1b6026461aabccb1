-- Back to one design per study: the states, events, pools, leases and
-- inboxes of arms other than 0 go (their answers stay in answers), and the
-- held-out answers, which were kept out of the votes, are counted there as
-- every other answer is.
DELETE FROM design_inbox WHERE arm <> 0;
DELETE FROM design_leases WHERE arm <> 0;
DELETE FROM design_pool WHERE arm <> 0;
DELETE FROM design_events WHERE arm <> 0;
DELETE FROM design_states WHERE arm <> 0;

INSERT INTO votes (study_id, anchor, j, k, j_closer, k_closer)
SELECT a.study_id, a.anchor, least(a.closer, a.farther), greatest(a.closer, a.farther),
    count(*) FILTER (WHERE a.closer < a.farther), count(*) FILTER (WHERE a.closer > a.farther)
FROM answers a JOIN questions q ON q.id = a.question_id
WHERE q.design = 'heldout'
GROUP BY a.study_id, a.anchor, least(a.closer, a.farther), greatest(a.closer, a.farther)
ON CONFLICT (study_id, anchor, j, k) DO UPDATE
SET j_closer = votes.j_closer + excluded.j_closer, k_closer = votes.k_closer + excluded.k_closer;

DROP INDEX design_inbox_study;
CREATE INDEX design_inbox_study ON design_inbox (study_id, id);
ALTER TABLE design_inbox DROP COLUMN arm;

DROP INDEX design_leases_expiry;
CREATE INDEX design_leases_expiry ON design_leases (study_id, expires_at);
DROP INDEX design_leases_study;
CREATE INDEX design_leases_study ON design_leases (study_id, anchor, j, k);
ALTER TABLE design_leases DROP COLUMN arm;

DROP INDEX design_pool_order;
ALTER TABLE design_pool DROP CONSTRAINT design_pool_pkey;
ALTER TABLE design_pool DROP COLUMN arm;
ALTER TABLE design_pool ADD CONSTRAINT design_pool_pkey PRIMARY KEY (study_id, anchor, j, k);
CREATE INDEX design_pool_order ON design_pool (study_id, band, prio);

ALTER TABLE design_events DROP CONSTRAINT design_events_state_fkey,
    DROP CONSTRAINT design_events_pkey;
ALTER TABLE design_events DROP COLUMN arm;
ALTER TABLE design_events ADD CONSTRAINT design_events_pkey PRIMARY KEY (study_id, version);
ALTER TABLE design_states DROP CONSTRAINT design_states_pkey;
ALTER TABLE design_states DROP COLUMN arm;
ALTER TABLE design_states ADD CONSTRAINT design_states_pkey PRIMARY KEY (study_id);
ALTER TABLE design_events ADD CONSTRAINT design_events_study_id_fkey FOREIGN KEY (study_id)
    REFERENCES design_states (study_id) ON DELETE CASCADE;

DROP TABLE arm_counts;
ALTER TABLE participants DROP COLUMN arm;
ALTER TABLE studies DROP COLUMN heldout_share, DROP COLUMN arms;
