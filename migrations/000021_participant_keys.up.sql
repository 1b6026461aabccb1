-- Every answer used to take a share lock on its study's row three to five
-- times: the foreign keys of questions, answers, trial answers, design
-- leases and the design inbox referenced studies(id), and a foreign key's
-- check locks the referenced row (FOR KEY SHARE). All the answers of a
-- study lock that one row at once, and PostgreSQL records each new set of
-- lockers of a row as a new MultiXact: under load the study's row was the
-- busiest lock of the collection path (issue 14; docs/benchmarks.md). The
-- rows that belong to a participant now reference the participant by
-- (id, study_id), a row only that participant's own requests lock, which
-- also makes the database check that a row's study is its participant's.
-- Deleting a study still deletes them: studies -> participants ->
-- (questions, answers, trial answers, leases, inbox), each ON DELETE
-- CASCADE.
CREATE UNIQUE INDEX participants_id_study ON participants (id, study_id);

ALTER TABLE questions DROP CONSTRAINT questions_study_id_fkey,
	DROP CONSTRAINT questions_participant_id_fkey,
	ADD CONSTRAINT questions_participant_fkey FOREIGN KEY (participant_id, study_id)
		REFERENCES participants (id, study_id) ON DELETE CASCADE NOT VALID;
ALTER TABLE questions VALIDATE CONSTRAINT questions_participant_fkey;
DROP INDEX questions_participant;
CREATE INDEX questions_participant ON questions (participant_id, study_id);

ALTER TABLE answers DROP CONSTRAINT answers_study_id_fkey,
	DROP CONSTRAINT answers_participant_id_fkey,
	ADD CONSTRAINT answers_participant_fkey FOREIGN KEY (participant_id, study_id)
		REFERENCES participants (id, study_id) ON DELETE CASCADE NOT VALID;
ALTER TABLE answers VALIDATE CONSTRAINT answers_participant_fkey;
DROP INDEX answers_participant;
CREATE INDEX answers_participant ON answers (participant_id, study_id);

ALTER TABLE trial_answers DROP CONSTRAINT trial_answers_study_id_fkey,
	DROP CONSTRAINT trial_answers_participant_id_fkey,
	ADD CONSTRAINT trial_answers_participant_fkey FOREIGN KEY (participant_id, study_id)
		REFERENCES participants (id, study_id) ON DELETE CASCADE NOT VALID;
ALTER TABLE trial_answers VALIDATE CONSTRAINT trial_answers_participant_fkey;
DROP INDEX trial_answers_participant;
CREATE INDEX trial_answers_participant ON trial_answers (participant_id, study_id);

-- A lease already references its participant (design_leases_pkey leads
-- with participant_id); the inbox gets the same reference.
ALTER TABLE design_leases DROP CONSTRAINT design_leases_study_id_fkey;
ALTER TABLE design_inbox DROP CONSTRAINT design_inbox_study_id_fkey,
	ADD CONSTRAINT design_inbox_participant_fkey FOREIGN KEY (participant_id, study_id)
		REFERENCES participants (id, study_id) ON DELETE CASCADE NOT VALID;
ALTER TABLE design_inbox VALIDATE CONSTRAINT design_inbox_participant_fkey;
CREATE INDEX design_inbox_participant ON design_inbox (participant_id, study_id);
