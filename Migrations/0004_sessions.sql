-- Dashboard sign-ins. The browser holds a random token; only its SHA-256 is kept, as for API
-- keys, so a stolen database file signs no one in. A session acts with the key it was opened
-- with: revoking or deleting the key ends its sessions at once.
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    key_id INTEGER NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
    sha256 BLOB NOT NULL UNIQUE CHECK (length(sha256) = 32),
    -- Unix milliseconds, as in 0002.
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);

CREATE INDEX sessions_by_key ON sessions (key_id);
CREATE INDEX sessions_by_expiry ON sessions (expires_at);
