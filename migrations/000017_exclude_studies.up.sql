-- A study can refuse the external ids that took part in other studies the
-- researcher names (issue 15): their ids, checked when someone new joins.
ALTER TABLE studies ADD COLUMN exclude_studies bigint[] NOT NULL DEFAULT '{}';
