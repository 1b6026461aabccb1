-- Quality control for crowd studies (issue: catch trials, repeat trials,
-- "can't decide").
--
-- studies.quality holds the study's settings (collect.QualityControl): how
-- often, or at which question numbers, a participant gets a catch or a
-- repeat trial, and whether the question page offers "can't decide".
ALTER TABLE studies ADD COLUMN quality jsonb NOT NULL DEFAULT '{}';

-- Catch and repeat trials are ordinary questions whose design is 'catch' or
-- 'repeat'; expected is the option that is the right answer (a catch
-- trial) or the one the participant chose when first asked (a repeat).
ALTER TABLE questions ADD COLUMN expected integer;
-- A catch trial shows the anchor itself as one option.
ALTER TABLE questions DROP CONSTRAINT questions_check;
ALTER TABLE questions ADD CONSTRAINT questions_options CHECK (
    left_idx <> right_idx AND (design = 'catch' OR (anchor <> left_idx AND anchor <> right_idx)));
-- A repeat trial asks a comparison the participant was asked before.
DROP INDEX questions_comparison_once;
CREATE UNIQUE INDEX questions_comparison_once
    ON questions (participant_id, anchor, least(left_idx, right_idx), greatest(left_idx, right_idx))
    WHERE design NOT IN ('import', 'repeat');

-- trial_answers: the answers that are not triplets, kept apart from answers
-- so that they never reach votes, a design, recompute or triplets.csv.
-- closer is NULL for "can't decide" (a skip, of any question); correct
-- says whether a catch or repeat trial got its expected option (NULL for
-- other questions and for skips).
CREATE TABLE trial_answers (
    question_id    text PRIMARY KEY REFERENCES questions (id) ON DELETE CASCADE,
    study_id       bigint NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    participant_id bigint NOT NULL REFERENCES participants (id) ON DELETE CASCADE,
    closer         integer,
    correct        boolean,
    response_ms    integer CHECK (response_ms >= 0),
    answered_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX trial_answers_participant ON trial_answers (participant_id);
CREATE INDEX trial_answers_study ON trial_answers (study_id, answered_at, question_id);

-- gold_triplets: a researcher's known answers (uploaded as CSV), asked as
-- catch trials: closer is the right answer. Items by id, not index: a
-- study's items are renumbered until its first question.
CREATE TABLE gold_triplets (
    study_id     bigint NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    line         integer NOT NULL, -- the row's line in the uploaded file
    anchor_item  bigint NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    closer_item  bigint NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    farther_item bigint NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    PRIMARY KEY (study_id, line),
    CHECK (anchor_item <> closer_item AND anchor_item <> farther_item AND closer_item <> farther_item)
);
-- Deleting an item looks its gold triplets up by each reference.
CREATE INDEX gold_triplets_anchor ON gold_triplets (anchor_item);
CREATE INDEX gold_triplets_closer ON gold_triplets (closer_item);
CREATE INDEX gold_triplets_farther ON gold_triplets (farther_item);
