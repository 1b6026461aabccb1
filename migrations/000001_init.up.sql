-- closer: the collection schema (studies, items, participants, questions,
-- answers, votes) and the researchers' accounts (admins, sessions, API tokens).

CREATE TABLE admins (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email         text NOT NULL UNIQUE,
    password_hash text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- Browser sessions of admins. Only the sha256 of the cookie's token is kept.
CREATE TABLE sessions (
    token_hash bytea PRIMARY KEY,
    admin_id   bigint NOT NULL REFERENCES admins (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX sessions_expires_at ON sessions (expires_at);

-- Bearer tokens for scripts (CSV export). Only the sha256 is kept.
CREATE TABLE api_tokens (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    admin_id     bigint NOT NULL REFERENCES admins (id) ON DELETE CASCADE,
    name         text NOT NULL,
    token_hash   bytea NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);

CREATE TABLE studies (
    id                        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    slug                      text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$'),
    title                     text NOT NULL CHECK (title <> ''),
    instructions              text NOT NULL DEFAULT '',
    debrief                   text NOT NULL DEFAULT '',
    questions_per_participant integer NOT NULL CHECK (questions_per_participant BETWEEN 1 AND 100000),
    status                    text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'open', 'paused', 'closed')),
    -- The question design; the application checks it against the designs it knows.
    design                    text NOT NULL DEFAULT 'random',
    created_at                timestamptz NOT NULL DEFAULT now(),
    updated_at                timestamptz NOT NULL DEFAULT now()
);

-- Items are images stored in PostgreSQL. idx is the item's index 0..n-1 used
-- by the algorithms (natural file-name order).
CREATE TABLE items (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    study_id     bigint NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    idx          integer NOT NULL CHECK (idx >= 0),
    label        text NOT NULL,
    file_name    text NOT NULL,
    content_type text NOT NULL,
    sha256       text NOT NULL,
    width        integer NOT NULL,
    height       integer NOT NULL,
    data         bytea NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (study_id, idx),
    UNIQUE (study_id, sha256)
);
CREATE INDEX items_sha256 ON items (sha256);

CREATE TABLE participants (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    public_id       text NOT NULL UNIQUE,
    study_id        bigint NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    token_hash      bytea NOT NULL UNIQUE,
    external_id     text,
    completion_code text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    completed_at    timestamptz
);
CREATE INDEX participants_study ON participants (study_id);

-- A question is one comparison issued to one participant: which of left and
-- right is closer to anchor. Its id is unguessable (128 random bits).
CREATE TABLE questions (
    id             text PRIMARY KEY,
    study_id       bigint NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    participant_id bigint NOT NULL REFERENCES participants (id) ON DELETE CASCADE,
    anchor         integer NOT NULL,
    left_idx       integer NOT NULL,
    right_idx      integer NOT NULL,
    design         text NOT NULL,
    issued_at      timestamptz NOT NULL DEFAULT now(),
    answered_at    timestamptz,
    CHECK (anchor <> left_idx AND anchor <> right_idx AND left_idx <> right_idx)
);
-- A participant never holds more than one open question.
CREATE UNIQUE INDEX questions_one_open ON questions (participant_id) WHERE answered_at IS NULL;
-- Never the same comparison (anchor and unordered pair) twice to one participant.
CREATE UNIQUE INDEX questions_comparison_once
    ON questions (participant_id, anchor, least(left_idx, right_idx), greatest(left_idx, right_idx));
CREATE INDEX questions_study ON questions (study_id, issued_at);

-- One answer per question; the answer is the triplet (anchor, closer, farther).
CREATE TABLE answers (
    question_id    text PRIMARY KEY REFERENCES questions (id) ON DELETE CASCADE,
    study_id       bigint NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    participant_id bigint NOT NULL REFERENCES participants (id) ON DELETE CASCADE,
    anchor         integer NOT NULL,
    closer         integer NOT NULL,
    farther        integer NOT NULL,
    response_ms    integer CHECK (response_ms >= 0),
    answered_at    timestamptz NOT NULL DEFAULT now()
);
-- Export order (a cursor over it starts streaming at once).
CREATE INDEX answers_study ON answers (study_id, answered_at, question_id);
CREATE INDEX answers_participant ON answers (participant_id);

-- Vote counts per anchor and unordered pair j < k: j_closer = #(a, j, k),
-- k_closer = #(a, k, j). A contradiction is a row with both above zero.
CREATE TABLE votes (
    study_id bigint NOT NULL REFERENCES studies (id) ON DELETE CASCADE,
    anchor   integer NOT NULL,
    j        integer NOT NULL,
    k        integer NOT NULL,
    j_closer integer NOT NULL DEFAULT 0,
    k_closer integer NOT NULL DEFAULT 0,
    PRIMARY KEY (study_id, anchor, j, k),
    CHECK (j < k)
);
