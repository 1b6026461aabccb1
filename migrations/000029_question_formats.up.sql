-- closer: question formats (issue 27). A study asks one format:
-- 'triplet' (an anchor and two options, every study before), 'odd-one-out'
-- (three items, the one least like the others chosen) or 'rank:N:K' (a
-- query and N references, K chosen in order). Frozen at the first
-- question, like the design.
ALTER TABLE studies ADD COLUMN format text NOT NULL DEFAULT 'triplet'
    CONSTRAINT studies_format_check CHECK (format IN ('triplet', 'odd-one-out') OR format ~ '^rank:[3-9]:[2-8]$');

-- A trial of another format than the triplet is one question row: options
-- holds every item it shows, in display order (odd-one-out: the three
-- items; rank: the N references, the query in anchor). anchor, left_idx
-- and right_idx keep three of its items (odd-one-out: the three; rank: the
-- query and two references), its key for questions_comparison_once. NULL
-- for a triplet, whose options are left_idx and right_idx.
ALTER TABLE questions ADD COLUMN options integer[];

-- The answer to such a trial: choices holds the items chosen, in the order
-- chosen (odd-one-out: the odd one; rank: K references, the most similar
-- first); anchor, closer and farther hold the first triplet it derives.
-- NULL for a triplet's answer.
ALTER TABLE answers ADD COLUMN choices integer[];
