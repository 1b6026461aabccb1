-- closer: the basis design's coordinate rule (design_config.coordinates).
-- Basis studies saved before the setting existed ran with the paper's
-- median rule; say so, so that "" never means a rule and an edit of such a
-- study does not read as a change of its frozen settings.
UPDATE studies
SET design_config = design_config || '{"coordinates": "median"}'
WHERE design = 'basis' AND NOT design_config ? 'coordinates';
