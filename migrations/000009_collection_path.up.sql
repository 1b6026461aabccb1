-- closer: the collection path at crowd scale (issue 14).
--
-- 1. A participant carries its own progress. answered counts its answers
-- (every question and answer used to count them with count(*)), and
-- open_question names the question it holds: at most one, as the partial
-- unique index questions_one_open on questions.answered_at used to ensure,
-- which made every answer rewrite its question row and every index of it.
-- A question is now written once; it is answered when its answers row
-- exists. fillfactor leaves room on each page for the counters' updates to
-- stay there (HOT updates touch no index).
ALTER TABLE participants
    ADD COLUMN answered integer NOT NULL DEFAULT 0 CHECK (answered >= 0),
    ADD COLUMN open_question text;
ALTER TABLE participants SET (fillfactor = 80);
UPDATE participants p SET answered = c.n
FROM (SELECT participant_id, count(*) AS n FROM answers GROUP BY participant_id) c
WHERE c.participant_id = p.id;
UPDATE participants p SET open_question = q.id
FROM questions q WHERE q.participant_id = p.id AND q.answered_at IS NULL;
DROP INDEX questions_one_open;
ALTER TABLE questions DROP COLUMN answered_at;

-- 2. studies.version changes with every change to a study's settings or
-- items, so that a server may keep them in memory (the items' labels and
-- images for every question it shows) and learn from this one column,
-- read in the question's own transaction, that its copy is stale.
ALTER TABLE studies ADD COLUMN version bigint NOT NULL DEFAULT 0;

-- 3. Designs no longer serialise a study. Requests never lock
-- design_states: a question takes a free slot of an open comparison from
-- design_pool (row locks, SKIP LOCKED), and an answer to a design question
-- is stored with a row in design_inbox. One writer per study at a time
-- (the design_states row lock) records the inbox in the design, in order,
-- and refreshes the pool, in a short transaction that never holds the lock
-- across a WAL flush of its own (internal/collect/design_scheduler.go).
--
-- design_pool: the comparisons the design has open, at most a window of
-- them: wanted is how many more answers the design wants for it, taken how
-- many are out on lease now (questions issued, their answers not yet
-- recorded). A question takes a slot when taken < wanted, in the order
-- (band, prio): the landmark designs band their rows by the answers wanted
-- (most first) and scatter them within a band, basis keeps its own order
-- in one band; ord is the row's place in the design's order. A claim
-- changes taken only: with room left on its page (fillfactor) the new row
-- version stays on it and no index changes (a HOT update), so the claims
-- leave no dead entries in design_pool_order for the next claims to step
-- over.
CREATE TABLE design_pool (
    study_id bigint  NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    anchor   integer NOT NULL,
    j        integer NOT NULL,
    k        integer NOT NULL,
    wanted   integer NOT NULL CHECK (wanted >= 0),
    taken    integer NOT NULL DEFAULT 0 CHECK (taken >= 0),
    ord      bigint  NOT NULL,
    band     integer NOT NULL,
    prio     bigint  NOT NULL,
    PRIMARY KEY (study_id, anchor, j, k),
    CHECK (j < k)
) WITH (fillfactor = 50);
CREATE INDEX design_pool_order ON design_pool (study_id, band, prio);

-- design_inbox: answers to a design's questions, stored and acknowledged,
-- that the design has not recorded yet (the writer deletes the rows it
-- records, in the same transaction).
CREATE TABLE design_inbox (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    study_id       bigint  NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    participant_id bigint  NOT NULL,
    anchor         integer NOT NULL,
    closer         integer NOT NULL,
    farther        integer NOT NULL
);
CREATE INDEX design_inbox_study ON design_inbox (study_id, id);
