-- Flagpole schema, version 9, for PostgreSQL (types as in 0001): targeting rules and segments,
-- kept with each revision.
--
-- An environment's feature rules and segments are one document (docs/TARGETING.md), kept in
-- each revision beside its features.json and configs file, so a rollback restores them and a
-- diff covers them. NULL: the revision has neither rules nor segments.
ALTER TABLE revisions ADD COLUMN targeting bytea;

-- The segment an audit row is about, for a revision that changes segments.
ALTER TABLE audit ADD COLUMN segment_name text COLLATE "C";

-- A segment's list of users (up to 100 000 ids) is kept once per distinct content, under the
-- SHA-256 of its bytes (ids in code-point order, one per line): a revision names the list by
-- its digest, so revisions that don't change a list don't copy it. Lists are never deleted: an
-- old revision, restored by a rollback, still finds its own.
CREATE TABLE segment_lists (
    tenant_id bigint NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    sha256 bytea NOT NULL CHECK (octet_length(sha256) = 32),
    users bytea NOT NULL,
    user_count bigint NOT NULL CHECK (user_count >= 0),
    PRIMARY KEY (tenant_id, sha256)
);
