-- What `flagpole serve` needs beside the documents: API keys and per-environment delivery settings.

-- Only the SHA-256 of a key is kept: a stolen database file opens no door. The prefix is the
-- key's first characters, shown in listings and used to find the row before comparing digests.
CREATE TABLE api_keys (
    id INTEGER PRIMARY KEY,
    -- NULL only for a server-wide admin key, which manages tenants.
    tenant_id INTEGER REFERENCES tenants(id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('admin', 'editor', 'reader', 'delivery', 'server-admin')),
    prefix TEXT NOT NULL UNIQUE,
    sha256 BLOB NOT NULL CHECK (length(sha256) = 32),
    name TEXT NOT NULL DEFAULT '',
    -- Unix milliseconds, as in 0002.
    created_at INTEGER NOT NULL,
    revoked_at INTEGER,
    CHECK ((role = 'server-admin') = (tenant_id IS NULL))
);

CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id, id);

-- A private environment's document is served only with a delivery key (or any key of its tenant).
ALTER TABLE environments ADD COLUMN is_private INTEGER NOT NULL DEFAULT 0 CHECK (is_private IN (0, 1));
-- NULL: the server's default Cache-Control for shared documents.
ALTER TABLE environments ADD COLUMN cache_control TEXT;
-- Counts changes of the two settings above. With the revision number, which only grows too, it
-- orders readings of an environment's delivery state, so a server never goes back to an older one.
ALTER TABLE environments ADD COLUMN delivery_version INTEGER NOT NULL DEFAULT 0;
