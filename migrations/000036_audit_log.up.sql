-- Issue 30: the audit trail. Who (account id and e-mail as they were),
-- when, from where and what changed, in which study. It is append-only for
-- everyone: a trigger refuses UPDATE, DELETE and TRUNCATE. It keeps no
-- foreign keys, so deleting an account or a study keeps its history.
CREATE TABLE audit_log (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at         timestamptz NOT NULL DEFAULT now(),
    admin_id   bigint,
    email      text NOT NULL DEFAULT '',
    address    text NOT NULL DEFAULT '',
    about_study bigint, -- the study it is about (not a study_id: the log outlives the study)
    study_slug text NOT NULL DEFAULT '',
    action     text NOT NULL,
    detail     text NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_study ON audit_log (about_study, id);

CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only' USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
