-- The time a question's images are on screen before its buttons take a
-- click (milliseconds; 0: at once), enforced by the question page's script.
ALTER TABLE studies ADD COLUMN min_view_ms integer NOT NULL DEFAULT 0;
