-- An optional consent text (Markdown) a participant agrees to before the
-- first question; empty: no consent step.
ALTER TABLE studies ADD COLUMN consent text NOT NULL DEFAULT '';
