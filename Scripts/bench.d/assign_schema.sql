-- The assign baseline's schema: a new user's tables for a test's users and their history, with
-- just the columns flagpole's rows need and the same keys and indexes as flagpole's
-- (Migrations/0002 and 0005): assignments keyed by (feature_id, point, user_id) without rowid,
-- events with their three indexes. No tenants, environments or deltas table (flagpole also
-- adds the users to assignment_deltas, the users per variation and minute: one row per variation).
-- :feature_id and :test are replaced by Scripts/bench: the test's id and name in flagpole's database.
PRAGMA journal_mode = WAL;
CREATE TABLE features (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);
CREATE TABLE assignments (
    feature_id INTEGER NOT NULL REFERENCES features (id),
    user_id TEXT NOT NULL,
    point REAL NOT NULL,
    variation TEXT NOT NULL,
    revision INTEGER NOT NULL,
    assigned_at INTEGER NOT NULL,
    PRIMARY KEY (feature_id, point, user_id)
) WITHOUT ROWID;
CREATE TABLE assignment_events (
    id INTEGER PRIMARY KEY,
    environment_id INTEGER NOT NULL,
    feature_id INTEGER NOT NULL REFERENCES features (id),
    user_id TEXT NOT NULL,
    previous_variation TEXT,
    variation TEXT NOT NULL,
    point REAL NOT NULL,
    revision INTEGER NOT NULL,
    reason TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX assignment_events_by_user ON assignment_events (environment_id, user_id, id);
CREATE INDEX assignment_events_by_feature ON assignment_events (feature_id, id);
CREATE INDEX assignment_events_by_environment ON assignment_events (environment_id, id);
INSERT INTO features (id, name) VALUES (:feature_id, ':test');
