-- Issue 29: a study of sounds may ask that every sound of a question be
-- played to its end before the question takes an answer. The question
-- page enforces it in the browser only (app.js): it is a rule for
-- participants, not a check the server can make.
ALTER TABLE studies ADD COLUMN play_to_end boolean NOT NULL DEFAULT false;
