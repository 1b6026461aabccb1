-- closer: question designs (issue 5). A study's design settings, the
-- persisted state of its design (a snapshot plus the answers recorded since),
-- and the leases that hand open comparisons to participants.

-- The design's settings (seed, repeats, landmarks, extra); frozen once
-- questions were issued, like studies.design.
ALTER TABLE studies ADD COLUMN design_config jsonb NOT NULL DEFAULT '{}';

-- One row per study whose design keeps state. The row is the design's lock:
-- every question and every answer of a design study takes it FOR UPDATE, so
-- replicas serialise per study. The state at version v is the snapshot (taken
-- at snapshot_version) with the events snapshot_version+1..v replayed in
-- order. rev changes with every write; a process's cached state is current
-- when its (version, rev) matches.
CREATE TABLE design_states (
    study_id         bigint PRIMARY KEY REFERENCES studies (id) ON DELETE CASCADE,
    design           text NOT NULL,
    config           jsonb NOT NULL,
    items            integer NOT NULL CHECK (items >= 3),
    version          bigint NOT NULL DEFAULT 0 CHECK (version >= 0),
    rev              text NOT NULL,
    snapshot         bytea NOT NULL,
    snapshot_version bigint NOT NULL DEFAULT 0,
    snapshot_rev     text NOT NULL,
    -- The design's progress at version (JSON), for the study page.
    progress         jsonb NOT NULL DEFAULT '{}',
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    CHECK (snapshot_version <= version)
);

-- The answers the design accepted, in the order it recorded them.
CREATE TABLE design_events (
    study_id    bigint NOT NULL REFERENCES design_states (study_id) ON DELETE CASCADE,
    version     bigint NOT NULL CHECK (version >= 1),
    rev         text NOT NULL,
    anchor      integer NOT NULL,
    closer      integer NOT NULL,
    farther     integer NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (study_id, version)
);

-- An open comparison (anchor; j < k) handed to a participant's question until
-- expires_at. Active leases count against the answers a comparison still
-- wants; the lease is deleted when its question is answered. A participant
-- is never asked one comparison twice, so (participant, comparison) is a key.
CREATE TABLE design_leases (
    participant_id bigint NOT NULL REFERENCES participants (id) ON DELETE CASCADE,
    anchor         integer NOT NULL,
    j              integer NOT NULL,
    k              integer NOT NULL,
    study_id       bigint NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    leased_at      timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz NOT NULL,
    PRIMARY KEY (participant_id, anchor, j, k),
    CHECK (j < k)
);
CREATE INDEX design_leases_study ON design_leases (study_id, anchor, j, k);
