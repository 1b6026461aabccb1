-- health_probe is /healthz's write probe (collect.Store.WriteProbe): each
-- probe empties it with TRUNCATE (a new, empty file) and writes one row,
-- which must then allocate a page on disk. So a full disk fails the probe
-- as it fails the answers, and so does a read-only database (a standby,
-- default_transaction_read_only); a mere ping passes both.
CREATE TABLE health_probe (
    probed_at timestamptz NOT NULL
);
