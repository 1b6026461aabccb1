-- pgbench: the database work of one answer of a random-design study with
-- the next question in its reply (store.AnswerNext), statement for
-- statement, without HTTP, Go or a load generator: lock the participant and
-- read their study, issue a question, store the answer with its vote, count
-- it on the participant. pgbench's client c is participant c + 1 (at most
-- 1,000 clients); the question's anchor and options are drawn from 1,000
-- items so that the one-comparison-per-participant index refuses none, the
-- vote from the study's 40. It bounds what any server can do with this
-- work on this machine (docs/benchmarks.md, "the latency bound").
-- Setup: scripts/pgbench-answer-setup.sql.
--   pgbench -n -c 200 -j 2 -T 15 -f scripts/pgbench-answer-next.sql DBURL
\set p :client_id + 1
\set qa random(0, 999)
\set qj random(0, 998)
\set qk random(:qj + 1, 999)
\set a random(0, 39)
\set j random(0, 38)
\set k random(:j + 1, 39)
\set c random(0, 1)
BEGIN;
SELECT s.id AS sid, s.status, s.questions_per_participant, s.quality, p.answered, p.open_question,
	nextval('pgbench_question') AS q
FROM participants p JOIN studies s ON s.id = p.study_id WHERE p.id = :p FOR UPDATE OF p
\gset
INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design)
VALUES ('pgn' || :q, 1, :p, :qa, :qj, :qk, 'random')
ON CONFLICT DO NOTHING RETURNING issued_at;
INSERT INTO answers (question_id, study_id, participant_id, anchor, closer, farther, response_ms)
VALUES ('pgn' || :q, 1, :p, :a, :j, :k, 1000);
INSERT INTO votes (study_id, anchor, j, k, j_closer, k_closer)
VALUES (1, :a, :j, :k, :c, 1 - :c)
ON CONFLICT (study_id, anchor, j, k) DO UPDATE
SET j_closer = votes.j_closer + excluded.j_closer, k_closer = votes.k_closer + excluded.k_closer;
UPDATE participants SET answered = answered + 1, last_active_at = now(), open_question = 'pgn' || :q
WHERE id = :p RETURNING answered, completion_code;
COMMIT;
