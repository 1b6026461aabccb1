-- What an image upload kept and refused, kept for the study page the
-- upload redirects to (so that reloading that page never sends the files
-- again). Reports older than a day are deleted when the next one is saved.
CREATE TABLE upload_reports (
    id         text PRIMARY KEY,
    study_id   bigint NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    report     jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX upload_reports_study ON upload_reports (study_id, created_at);
