-- closer: the layout of a question (issue 26, the study form's layout
-- setting): the anchor above the two options ('above', the layout every
-- study had before) or first in one row with the options to its right
-- ('beside'). The items are drawn at one size in both.
ALTER TABLE studies ADD COLUMN layout text NOT NULL DEFAULT 'above'
    CONSTRAINT studies_layout_check CHECK (layout IN ('above', 'beside'));
