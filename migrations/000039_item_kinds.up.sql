-- Issue 29: stimuli beyond images. Every item has a kind: 'image' (every
-- item so far, and the label-only items a triplet file imports), 'text'
-- (a word or a sentence, its characters in text), and 'audio' and 'video'
-- (allowed here for the parsers that follow). A text item keeps no bytes
-- (data NULL); its sha256 is that of its text, so the study's
-- UNIQUE (study_id, sha256) refuses the same text twice. The bounds are
-- the application's (study.MaxTextChars), kept here too so that no path
-- around it stores a longer or an empty text.
ALTER TABLE items ADD COLUMN kind text NOT NULL DEFAULT 'image'
    CHECK (kind IN ('image', 'text', 'audio', 'video'));
ALTER TABLE items ADD COLUMN text text
    CHECK (text IS NULL OR char_length(text) BETWEEN 1 AND 500);
ALTER TABLE items DROP CONSTRAINT items_image_or_label;
ALTER TABLE items ADD CONSTRAINT items_kind_content CHECK (
    CASE kind
        WHEN 'text' THEN text IS NOT NULL AND data IS NULL
        ELSE text IS NULL AND (data IS NOT NULL OR content_type = '')
    END);

-- Whether a study's items may be of more than one kind (default: one kind
-- per study; the store refuses an item of another kind unless this is set).
ALTER TABLE studies ADD COLUMN mixed_kinds boolean NOT NULL DEFAULT false;
