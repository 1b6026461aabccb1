-- Recruiting platforms (issue 15). studies.platform holds the study's
-- platform settings as JSON (collect.Platform: kind, completion and
-- screened-out codes, a generic platform's id parameter and return URL);
-- '{}' is no platform. participants.platform_params keeps what the
-- platform put in the participant's link besides their id (Prolific's
-- STUDY_ID and SESSION_ID).
ALTER TABLE studies ADD COLUMN platform jsonb NOT NULL DEFAULT '{}';
ALTER TABLE participants ADD COLUMN platform_params jsonb;
