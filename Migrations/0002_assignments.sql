-- Flagpole schema, version 2: per-user state. The current group of each (feature, user)
-- with its append-only history, and per-user unlocks with theirs.
--
-- These tables hold millions of rows, so times are Unix milliseconds (8 bytes, compared as
-- integers) and each index serves a query users run, named after it.

-- Lets the per-user tables point at a feature, its environment and its tenant with one key,
-- so a row can't claim an environment its feature is not in.
CREATE UNIQUE INDEX features_identity ON features(id, environment_id, tenant_id);

CREATE TABLE assignments (
    tenant_id INTEGER NOT NULL,
    environment_id INTEGER NOT NULL,
    feature_id INTEGER NOT NULL,
    user_id TEXT NOT NULL,
    -- murmur3(salt:user) scaled to [0, 100): fixed for the feature's life.
    point REAL NOT NULL CHECK (point >= 0 AND point < 100),
    variation TEXT NOT NULL,
    -- 1 while a QA override forces `variation`; re-evaluations leave such rows alone.
    is_override INTEGER NOT NULL DEFAULT 0 CHECK (is_override IN (0, 1)),
    -- The revision the variation was computed under.
    revision INTEGER NOT NULL,
    assigned_at INTEGER NOT NULL,
    PRIMARY KEY (feature_id, user_id),
    FOREIGN KEY (feature_id, environment_id, tenant_id) REFERENCES features(id, environment_id, tenant_id) ON DELETE CASCADE
) WITHOUT ROWID;
-- A bias change re-evaluates only the users whose point lies in a range that changed hands.
CREATE INDEX assignments_by_point ON assignments(feature_id, point);

CREATE TABLE assignment_events (
    id INTEGER PRIMARY KEY,
    tenant_id INTEGER NOT NULL,
    environment_id INTEGER NOT NULL,
    feature_id INTEGER NOT NULL,
    user_id TEXT NOT NULL,
    -- NULL for a first assignment.
    previous_variation TEXT,
    variation TEXT NOT NULL,
    point REAL NOT NULL,
    revision INTEGER NOT NULL,
    reason TEXT NOT NULL CHECK (reason IN (
        'first', 'bias', 'variations', 'enable', 'disable', 'rollout', 'rollback', 'override', 'override-cleared')),
    created_at INTEGER NOT NULL,
    FOREIGN KEY (feature_id, environment_id, tenant_id) REFERENCES features(id, environment_id, tenant_id) ON DELETE CASCADE
);
-- A user's history, newest first.
CREATE INDEX assignment_events_by_user ON assignment_events(environment_id, user_id, id);
-- A feature's history, newest first (ids grow with time, so a time range reads a slice), and
-- its counts per variation at a past time.
CREATE INDEX assignment_events_by_feature ON assignment_events(feature_id, id);
-- An environment's history, newest first.
CREATE INDEX assignment_events_by_environment ON assignment_events(environment_id, id);

CREATE TABLE unlocks (
    tenant_id INTEGER NOT NULL,
    environment_id INTEGER NOT NULL,
    feature_id INTEGER NOT NULL,
    user_id TEXT NOT NULL,
    unlocked INTEGER NOT NULL CHECK (unlocked IN (0, 1)),
    -- Why, in the team's words: a purchase id, a support ticket.
    source TEXT,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (feature_id, user_id),
    FOREIGN KEY (feature_id, environment_id, tenant_id) REFERENCES features(id, environment_id, tenant_id) ON DELETE CASCADE
) WITHOUT ROWID;
-- A user's unlocks in an environment.
CREATE INDEX unlocks_by_user ON unlocks(environment_id, user_id);

CREATE TABLE unlock_events (
    id INTEGER PRIMARY KEY,
    tenant_id INTEGER NOT NULL,
    environment_id INTEGER NOT NULL,
    feature_id INTEGER NOT NULL,
    user_id TEXT NOT NULL,
    unlocked INTEGER NOT NULL CHECK (unlocked IN (0, 1)),
    source TEXT,
    actor TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    FOREIGN KEY (feature_id, environment_id, tenant_id) REFERENCES features(id, environment_id, tenant_id) ON DELETE CASCADE
);
CREATE INDEX unlock_events_by_user ON unlock_events(environment_id, user_id, id);
