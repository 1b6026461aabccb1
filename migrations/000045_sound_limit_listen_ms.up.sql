-- Issue 29: a study sets the longest a sound item may last (the upload and
-- the bundle import refuse a longer one), and an answer keeps how long the
-- participant listened to the question's sounds (app.js sums it; NULL: not
-- known, as for an answer without JavaScript or before this column).
ALTER TABLE studies ADD COLUMN sound_max_seconds integer NOT NULL DEFAULT 30
	CHECK (sound_max_seconds BETWEEN 1 AND 600);
ALTER TABLE answers ADD COLUMN listen_ms integer
	CHECK (listen_ms BETWEEN 0 AND 3600000);
