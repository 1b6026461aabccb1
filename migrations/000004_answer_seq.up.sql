-- closer: a monotonic sequence number per answer, so the dashboard can keep
-- its additive aggregates up to a watermark and read only the answers after
-- it (an index range over a few rows) instead of scanning the study.
ALTER TABLE answers ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
CREATE INDEX answers_study_seq ON answers (study_id, seq);
