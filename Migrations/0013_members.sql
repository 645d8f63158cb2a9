-- Flagpole schema, version 13: members, the people of a tenant, who sign in as themselves,
-- own their keys and are named in every revision they make.

-- A person, one across tenants: what a tenant's admin grants is a membership, below.
CREATE TABLE members (
    id INTEGER PRIMARY KEY,
    -- Lowercase, as given: an identifier to sign in with. Flagpole sends no mail.
    email TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    -- scrypt's output and its parameters (`scrypt$ln$r$p$SALT$HASH`, hex); NULL until the
    -- member accepts their invitation and sets one.
    password_hash TEXT,
    -- Unix milliseconds, as in 0002.
    created_at INTEGER NOT NULL
);

-- What a member may do in a tenant: the tenant roles keys have.
CREATE TABLE memberships (
    member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('admin', 'editor', 'reader')),
    created_at INTEGER NOT NULL,
    PRIMARY KEY (member_id, tenant_id)
);

CREATE INDEX memberships_by_tenant ON memberships (tenant_id);

-- One-time links, handed over by hand: an invitation sets the first password, a reset a new
-- one. Only the token's SHA-256 is kept, as for keys.
CREATE TABLE member_links (
    id INTEGER PRIMARY KEY,
    member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    purpose TEXT NOT NULL CHECK (purpose IN ('invitation', 'reset')),
    sha256 BLOB NOT NULL UNIQUE CHECK (length(sha256) = 32),
    created_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at INTEGER
);

CREATE INDEX member_links_by_member ON member_links (member_id);

-- A member's dashboard sign-ins. What they may do is read from their memberships on every
-- request, so a new role or a removal takes effect at once.
CREATE TABLE member_sessions (
    id INTEGER PRIMARY KEY,
    member_id INTEGER NOT NULL REFERENCES members(id) ON DELETE CASCADE,
    sha256 BLOB NOT NULL UNIQUE CHECK (length(sha256) = 32),
    -- Where the browser signed in from, shown in the member's list of sessions.
    address TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);

CREATE INDEX member_sessions_by_member ON member_sessions (member_id);
CREATE INDEX member_sessions_by_expiry ON member_sessions (expires_at);

-- Failed sign-ins per subject (`account:EMAIL`, `address:IP`), in the database so that every
-- instance of the server counts them together.
CREATE TABLE sign_in_failures (
    subject TEXT PRIMARY KEY,
    failures INTEGER NOT NULL,
    window_started_at INTEGER NOT NULL,
    locked_until INTEGER
);

-- A key is a member's (their role caps it, and it goes with them) or, with no member, a
-- named service's.
ALTER TABLE api_keys ADD COLUMN member_id INTEGER REFERENCES members(id) ON DELETE CASCADE;
-- When the key was last presented, to the hour: listings show it.
ALTER TABLE api_keys ADD COLUMN last_used_at INTEGER;

CREATE INDEX api_keys_by_member ON api_keys (member_id);
