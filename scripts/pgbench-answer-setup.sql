-- Setup for scripts/pgbench-answer.sql: run once on a scratch database that
-- has closer's migrations applied (DATABASE_URL=... web migrate up). It makes
-- one study (id 1), 1,000 participants (ids 1..1000: pgbench's client c
-- answers as participant c + 1, as each annotator of the app answers as
-- their own participant, whose row their answers reference since migration
-- 000021) and 1,000,000 question rows pgb1..pgb1000000 for the answers to
-- point at (the answers' foreign key; since migration 000009 a question is
-- answered when it has an answer), and the sequence that hands them out.
-- scripts/pgbench-answer-next.sql issues its own questions. See
-- docs/benchmarks.md.
INSERT INTO studies (slug, title, questions_per_participant, status)
VALUES ('pgbench', 'pgbench', 100000, 'open');
INSERT INTO participants (public_id, study_id, token_hash)
SELECT 'pgbench' || i, 1, int4send(i) FROM generate_series(1, 1000) i;
INSERT INTO questions (id, study_id, participant_id, anchor, left_idx, right_idx, design)
SELECT 'pgb' || i, 1, 1, i, i + 1, i + 2, 'random'
FROM generate_series(1, 1000000) i;
CREATE SEQUENCE pgbench_question;
VACUUM ANALYZE;
