-- Issue 30: a study's retention of identifying fields. retention_days
-- after the study closed (closed_at, kept by a trigger on status), a
-- background job blanks its participants' external ids and platform
-- parameters. NULL: kept. Studies closed before this migration count as
-- closed from now.
ALTER TABLE studies
    ADD COLUMN retention_days integer CHECK (retention_days BETWEEN 1 AND 36500),
    ADD COLUMN closed_at timestamptz;
UPDATE studies SET closed_at = now() WHERE status = 'closed';

CREATE FUNCTION studies_closed_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.status = 'closed' THEN
        IF TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM 'closed' THEN
            NEW.closed_at := now();
        END IF;
    ELSE
        NEW.closed_at := NULL;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER studies_closed_at BEFORE INSERT OR UPDATE OF status ON studies
    FOR EACH ROW EXECUTE FUNCTION studies_closed_at();
