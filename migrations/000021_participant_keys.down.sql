DROP INDEX design_inbox_participant;
ALTER TABLE design_inbox DROP CONSTRAINT design_inbox_participant_fkey,
	ADD CONSTRAINT design_inbox_study_id_fkey FOREIGN KEY (study_id) REFERENCES studies (id) ON DELETE CASCADE;
ALTER TABLE design_leases ADD CONSTRAINT design_leases_study_id_fkey FOREIGN KEY (study_id) REFERENCES studies (id) ON DELETE CASCADE;

DROP INDEX trial_answers_participant;
CREATE INDEX trial_answers_participant ON trial_answers (participant_id);
ALTER TABLE trial_answers DROP CONSTRAINT trial_answers_participant_fkey,
	ADD CONSTRAINT trial_answers_participant_id_fkey FOREIGN KEY (participant_id) REFERENCES participants (id) ON DELETE CASCADE,
	ADD CONSTRAINT trial_answers_study_id_fkey FOREIGN KEY (study_id) REFERENCES studies (id) ON DELETE CASCADE;

DROP INDEX answers_participant;
CREATE INDEX answers_participant ON answers (participant_id);
ALTER TABLE answers DROP CONSTRAINT answers_participant_fkey,
	ADD CONSTRAINT answers_participant_id_fkey FOREIGN KEY (participant_id) REFERENCES participants (id) ON DELETE CASCADE,
	ADD CONSTRAINT answers_study_id_fkey FOREIGN KEY (study_id) REFERENCES studies (id) ON DELETE CASCADE;

DROP INDEX questions_participant;
CREATE INDEX questions_participant ON questions (participant_id);
ALTER TABLE questions DROP CONSTRAINT questions_participant_fkey,
	ADD CONSTRAINT questions_participant_id_fkey FOREIGN KEY (participant_id) REFERENCES participants (id) ON DELETE CASCADE,
	ADD CONSTRAINT questions_study_id_fkey FOREIGN KEY (study_id) REFERENCES studies (id) ON DELETE CASCADE;

DROP INDEX participants_id_study;
