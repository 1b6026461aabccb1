-- pgbench: the write closer makes for one answer (store.Answer) without the
-- reads around it: insert the answer row and upsert its vote count, in one
-- transaction, on a study of 40 items, each client as a participant of its
-- own. Setup: scripts/pgbench-answer-setup.sql.
--   pgbench -n -c 32 -j 2 -T 30 -f scripts/pgbench-answer.sql DBURL
\set a random(0, 39)
\set j random(0, 38)
\set k random(:j + 1, 39)
\set c random(0, 1)
\set p :client_id + 1
BEGIN;
INSERT INTO answers (question_id, study_id, participant_id, anchor, closer, farther, response_ms)
VALUES ('pgb' || nextval('pgbench_question'), 1, :p, :a, :j, :k, 1000);
INSERT INTO votes (study_id, anchor, j, k, j_closer, k_closer)
VALUES (1, :a, :j, :k, :c, 1 - :c)
ON CONFLICT (study_id, anchor, j, k) DO UPDATE
SET j_closer = votes.j_closer + excluded.j_closer, k_closer = votes.k_closer + excluded.k_closer;
COMMIT;
