DROP INDEX IF EXISTS api_tokens_admin;
DROP INDEX IF EXISTS sessions_admin;
DROP INDEX IF EXISTS design_leases_expiry;
DROP INDEX IF EXISTS questions_participant;
