-- closer: the active design for odd-one-out and rank studies (issue 27).
-- A pool row of such a study's active design is one trial: options holds
-- every item it shows (odd-one-out: its three items, which anchor, j and k
-- also are; rank: the N references chosen for the query in anchor, two of
-- which are j and k, the key questions_comparison_once and the leases
-- use). A claim shows them in a fresh random order. NULL for a triplet
-- study's rows, whose question is anchor, j and k alone; a trial study's
-- row without options is never claimed.
ALTER TABLE design_pool ADD COLUMN options integer[];
