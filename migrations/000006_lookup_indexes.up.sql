-- closer: indexes for the lookups that read whole tables once a study is
-- large (issue 11). internal/collect TestHotQueryPlans and
-- TestForeignKeysIndexed keep them needed and sufficient.
--
-- questions had no index that starts with participant_id and covers every
-- row: questions_one_open and questions_comparison_once are partial. So
-- "WHERE participant_id = $1" read the whole table: the comparisons a
-- participant was already asked (every question of the random design and
-- of the designs' random fallback; the lease release of landmark and basis
-- answers), and the ON DELETE CASCADE from participants, once per deleted
-- participant. After importing 2.17 million triplets a question took 73-80 ms
-- in every study and deleting the study never finished.
--
-- design_leases: the active leases of a study (every question of a
-- landmark or basis study counts them) were found among all its leases,
-- expired ones included: a lease outlives an abandoned question, one per
-- participant who left. (study_id, anchor, j, k) stays for the release.
--
-- sessions.admin_id and api_tokens.admin_id were the other foreign keys
-- without an index (small tables; an admin's tokens are listed by it).
--
-- What it costs: golang-migrate runs this file in one transaction, where
-- CREATE INDEX CONCURRENTLY is not allowed, so each build holds a SHARE
-- lock on its table: new questions and answers wait until it ends (reads
-- go on). On 2 million questions it took 2.0 s on the loaded 2-core
-- development box (docs/benchmarks.md, "Large-study query plans"). To avoid
-- even that pause on a larger database, build the index beforehand with
--     CREATE INDEX CONCURRENTLY questions_participant ON questions (participant_id);
-- and check that it is valid (\d questions shows no INVALID); this
-- migration then keeps it (IF NOT EXISTS).
CREATE INDEX IF NOT EXISTS questions_participant ON questions (participant_id);
CREATE INDEX IF NOT EXISTS design_leases_expiry ON design_leases (study_id, expires_at);
CREATE INDEX IF NOT EXISTS sessions_admin ON sessions (admin_id);
CREATE INDEX IF NOT EXISTS api_tokens_admin ON api_tokens (admin_id, id);
