-- Flagpole schema, version 16: how many times clients fetched each revision (what a ramp's step
-- has told anyone), and webhooks that tell a team's chat what its ramps did (docs/RAMPS.md,
-- "Fetch counts" and "Webhooks").

-- Fetches of each revision of an environment, by kind of client: each server counts in memory
-- and adds its counts here every few seconds, so several servers add up.
CREATE TABLE fetch_counts (
    environment_id INTEGER NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
    revision INTEGER NOT NULL,
    -- shared: features.json or configs.json without a user (the CDN's and most apps' fetch);
    -- pinned: a user's features.json; configs: a user's configs.json; ofrep, bucketeer: an
    -- evaluation of a user.
    client TEXT NOT NULL CHECK (client IN ('shared', 'pinned', 'configs', 'ofrep', 'bucketeer')),
    fetches INTEGER NOT NULL CHECK (fetches >= 0),
    last_at INTEGER NOT NULL,
    PRIMARY KEY (environment_id, revision, client)
);

-- Where an environment's ramp events are sent. The secret signs each body (HMAC-SHA-256): it
-- must be kept to sign, so it is kept, shown once when made and never again.
CREATE TABLE webhooks (
    id INTEGER PRIMARY KEY,
    tenant_id INTEGER NOT NULL,
    environment_id INTEGER NOT NULL,
    url TEXT NOT NULL CHECK (length(url) BETWEEN 1 AND 2000),
    secret TEXT NOT NULL,
    -- json: Flagpole's body; slack: `{"text": …}`, which Slack's and most chats' incoming webhooks take.
    format TEXT NOT NULL CHECK (format IN ('json', 'slack')),
    created_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER,
    FOREIGN KEY (environment_id, tenant_id) REFERENCES environments(id, tenant_id) ON DELETE CASCADE
);

CREATE INDEX webhooks_by_environment ON webhooks (environment_id);

-- Each event to each webhook, written in the transaction of what it tells (a step, a pause), and
-- sent after it commits, at least once: `id` is the delivery id the receiver de-duplicates by.
CREATE TABLE webhook_deliveries (
    -- The order they were written in.
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    webhook_id INTEGER NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    event TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    -- pending: to send at `next_at`; delivered: answered 2xx; failed: given up (why in `error`).
    state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_at INTEGER,
    -- The last attempt: its time, the status and the first bytes of the answer, or what failed.
    attempted_at INTEGER,
    status INTEGER,
    answer TEXT,
    error TEXT,
    CHECK ((state = 'pending') = (next_at IS NOT NULL))
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at, seq) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, seq);
