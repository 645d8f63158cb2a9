-- Flagpole schema, version 17, for PostgreSQL (types as in 0001): the event batches a server
-- refused whole, by environment, hour, cause and the key's shown prefix, so that a wrong key in
-- an app is seen where a team looks (`flagpole env list`, the environment's "Connect an app")
-- and not only in /metrics (docs/BUCKETEER.md, "Events refused whole").

-- Each server counts in memory and adds its counts here every few seconds, as it does fetches;
-- rows older than two days are dropped as new ones are added.
CREATE TABLE refused_event_batches (
    environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
    -- The start of the hour they were added in, in milliseconds since 1970.
    hour bigint NOT NULL,
    -- unknown_key: 401; other_environment: 403; malformed: 400 or 413; unavailable: 503.
    cause text COLLATE "C" NOT NULL CHECK (cause IN ('unknown_key', 'other_environment', 'malformed', 'unavailable')),
    -- The key sent, as listings show keys (`fp_` and 8 digits); '' when none was sent; '?' for
    -- a header that is no Flagpole key; '*' for keys past the 4 096 a server keeps apart.
    key_prefix text COLLATE "C" NOT NULL CHECK (char_length(key_prefix) <= 11),
    batches bigint NOT NULL CHECK (batches > 0),
    last_at bigint NOT NULL,
    PRIMARY KEY (environment_id, hour, cause, key_prefix)
);
