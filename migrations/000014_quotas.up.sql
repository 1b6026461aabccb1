-- Quotas (issue 15): a study stops admitting new participants once
-- max_participants (0: no limit) have completed or are in progress; a
-- participant with no activity for idle_minutes (0: never idle) is no
-- longer in progress. last_active_at is when a participant last joined or
-- answered.
ALTER TABLE studies
    ADD COLUMN max_participants integer NOT NULL DEFAULT 0,
    ADD COLUMN idle_minutes integer NOT NULL DEFAULT 0;
ALTER TABLE participants ADD COLUMN last_active_at timestamptz;
UPDATE participants p SET last_active_at = coalesce(
    (SELECT max(a.answered_at) FROM answers a WHERE a.participant_id = p.id), p.created_at)
WHERE p.completed_at IS NULL;
