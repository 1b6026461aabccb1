-- A participant holds, besides the question they answer now
-- (open_question), the one after it (ahead_question), issued one step
-- ahead so that the question page loads its images while the current
-- question is on screen. Answering the open question makes the question
-- ahead the open one. NULL: none issued ahead (the last question, a basis
-- design, or a participant from before this column).
ALTER TABLE participants ADD COLUMN ahead_question text;
