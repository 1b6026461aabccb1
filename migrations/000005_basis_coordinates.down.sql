-- Older binaries know only the median rule and ignore the key; drop it
-- where it says what they would do anyway.
UPDATE studies
SET design_config = design_config - 'coordinates'
WHERE design_config ->> 'coordinates' = 'median';
