DROP TABLE IF EXISTS design_leases;
DROP TABLE IF EXISTS design_events;
DROP TABLE IF EXISTS design_states;
ALTER TABLE studies DROP COLUMN IF EXISTS design_config;
