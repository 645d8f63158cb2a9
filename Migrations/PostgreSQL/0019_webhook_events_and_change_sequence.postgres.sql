-- Flagpole schema, version 19, for PostgreSQL (types as in 0001): the events each webhook hears,
-- and each environment's change sequence, which tells every server which environments and which
-- users a write changed (docs/WEBHOOKS.md; docs/SERVER.md, "Other writers").

-- The events a webhook hears, as a JSON array of names (`["revision.created", "ramp.paused"]`),
-- resolved when it was made: event kinds added later never change what it hears. NULL for
-- webhooks made before this column: the six ramp and trigger events they heard then.
ALTER TABLE webhooks ADD COLUMN events text COLLATE "C"
    CHECK (events IS NULL OR char_length(events) BETWEEN 2 AND 2000);

-- Raised by one for every committed write that changed the environment: a revision, other
-- delivery settings, or a per-user write (an override, an unlock, a forget, kept attributes, a
-- first assignment, a pin), by the trigger below as the write inserts its step.
ALTER TABLE environments ADD COLUMN change_sequence bigint NOT NULL DEFAULT 0;

-- What each step of an environment's change sequence changed: the users a per-user write changed,
-- as a JSON array of ids, or NULL for the whole environment (a revision, new delivery settings, a
-- write of more users than one row keeps). The tick deletes rows older than an hour; a server
-- further behind reads the whole environment as changed.
CREATE TABLE environment_changes (
    environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
    sequence bigint NOT NULL CHECK (sequence > 0),
    users text COLLATE "C",
    -- 1 when what everyone is served changed (a revision, delivery settings): servers read such a
    -- step at once; a step of per-user writes alone within their poll interval.
    delivery boolean NOT NULL DEFAULT false,
    -- Milliseconds since 1970.
    changed_at bigint NOT NULL,
    PRIMARY KEY (environment_id, sequence)
);

CREATE INDEX environment_changes_by_time ON environment_changes (changed_at);

-- A step is one statement, one round trip: its row carries the next number (writes hold the
-- store's write lock, so no two read the same one), which the environment takes here, and the
-- other instances hear of it with the commit (`LISTEN flagpole_changes`): `delivery` for a step
-- that changed what everyone is served, which they read at once, `users` for one of per-user
-- writes alone, which they read within their poll interval, however many come.
CREATE FUNCTION environment_changes_advance() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE environments SET change_sequence = NEW.sequence WHERE id = NEW.environment_id;
    PERFORM pg_notify('flagpole_changes', CASE WHEN NEW.delivery THEN 'delivery' ELSE 'users' END);
    RETURN NULL;
END
$$;

CREATE TRIGGER environment_changes_advance AFTER INSERT ON environment_changes
    FOR EACH ROW EXECUTE FUNCTION environment_changes_advance();

-- How many recorded users a revision moved between groups, where its change planned that (an
-- import, an edit, a bias change, a ramp's step, a rule change); NULL for other revisions and those
-- written before this column. The audit feed and `revision.created` report it.
ALTER TABLE revisions ADD COLUMN moved_users integer CHECK (moved_users >= 0);

-- Delivered and given-up deliveries are deleted by age (`--keep-deliveries`, 30 days by default).
CREATE INDEX webhook_deliveries_by_state_and_time ON webhook_deliveries (state, created_at);
