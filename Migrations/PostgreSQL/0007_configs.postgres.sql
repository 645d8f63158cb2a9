-- Flagpole schema, version 7, for PostgreSQL (types as in 0001): typed configs and tags, kept
-- with each revision.
--
-- An environment's configs (and the tags of its features, which features.json has no place for)
-- are one small typed document, the configs file `flagpole config export` writes. Each revision
-- keeps it beside its features.json, so a revision is the whole state apps are served: a rollback
-- restores features and configs together, and a diff or an audit row covers both. The current
-- configs are those of the latest revision. NULL: the revision has neither configs nor tags.
ALTER TABLE revisions ADD COLUMN configs bytea;

-- The config an audit row is about, for a revision that changes configs (feature_name is then
-- NULL, unless the row is about a feature's tags).
ALTER TABLE audit ADD COLUMN config_name text COLLATE "C";

-- A delivery key can be scoped to one environment of its tenant: what an OpenFeature provider
-- configured with a bare host presents, so that the key alone says which environment it reads.
-- NULL: every environment of the tenant (every key until now).
ALTER TABLE api_keys ADD COLUMN environment_id bigint REFERENCES environments(id) ON DELETE CASCADE
    CHECK (environment_id IS NULL OR role = 'delivery');

-- Secrets the server signs with, made once per database, so that what it signs (the tokens of
-- change-stream URLs) stays valid across restarts and, later, across instances.
-- (A primary key column is NOT NULL in PostgreSQL; SQLite's TEXT PRIMARY KEY would take a NULL.)
CREATE TABLE server_secrets (
    name text COLLATE "C" PRIMARY KEY,
    secret bytea NOT NULL CHECK (octet_length(secret) = 32),
    created_at bigint NOT NULL
);
