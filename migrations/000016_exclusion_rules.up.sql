-- Automatic exclusion (issue 15): rules a study sets (collect.ExclusionRules)
-- and checks when a participant finishes; excluded_reason says which rule
-- excluded a participant (NULL when a researcher did, or nobody).
ALTER TABLE studies ADD COLUMN exclusion jsonb NOT NULL DEFAULT '{}';
ALTER TABLE participants ADD COLUMN excluded_reason text;
