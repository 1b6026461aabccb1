-- Preview sessions (issue 26, item 6): a researcher answers their own
-- study as a participant without using a quota place, freezing the design
-- and arms, or landing in the results. A preview participant is an
-- ordinary participants row marked preview; its questions are random draws
-- that cast no vote and reach no design, and every read of results,
-- tallies, quotas and exports leaves it out unless asked.
ALTER TABLE participants ADD COLUMN preview boolean NOT NULL DEFAULT false;

-- A study's previews are few: this index lists them (the freeze check
-- skips their questions, the delete button removes them) without reading
-- the study's other participants.
CREATE INDEX participants_preview ON participants (study_id) WHERE preview;
