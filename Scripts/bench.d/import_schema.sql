-- The import baseline's schema: what a new user would write to keep features.json files in
-- SQLite, with just the columns the client reads, their keys, and nothing else (no tenants,
-- environments, archive, salts, unknown keys or indexes beyond the keys).
PRAGMA journal_mode = WAL;
CREATE TABLE revisions (
    id INTEGER PRIMARY KEY,
    number INTEGER NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    -- The whole file, as one JSON text.
    document TEXT NOT NULL
);
CREATE TABLE features (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    position INTEGER NOT NULL,
    description TEXT,
    section TEXT,
    development INTEGER,
    enabled INTEGER,
    unlocked INTEGER,
    type_json TEXT
);
CREATE TABLE variations (
    feature_id INTEGER NOT NULL REFERENCES features (id),
    position INTEGER NOT NULL,
    name TEXT,
    bias REAL,
    label TEXT,
    PRIMARY KEY (feature_id, position)
);
CREATE TABLE audit (
    id INTEGER PRIMARY KEY,
    revision_id INTEGER NOT NULL REFERENCES revisions (id),
    feature_name TEXT NOT NULL,
    change TEXT NOT NULL,
    after_json TEXT
);
