-- Flagpole schema, version 19: the events each webhook hears, and each environment's change
-- sequence, which tells every server which environments and which users a write changed
-- (docs/WEBHOOKS.md; docs/SERVER.md, "Other writers").

-- The events a webhook hears, as a JSON array of names (`["revision.created", "ramp.paused"]`),
-- resolved when it was made: event kinds added later never change what it hears. NULL for
-- webhooks made before this column: the six ramp and trigger events they heard then.
ALTER TABLE webhooks ADD COLUMN events TEXT CHECK (events IS NULL OR length(events) BETWEEN 2 AND 2000);

-- Raised by one for every committed write that changed the environment: a revision, other
-- delivery settings, or a per-user write (an override, an unlock, a forget, kept attributes, a
-- first assignment, a pin), by the trigger below as the write inserts its step.
ALTER TABLE environments ADD COLUMN change_sequence INTEGER NOT NULL DEFAULT 0;

-- What each step of an environment's change sequence changed: the users a per-user write changed,
-- as a JSON array of ids, or NULL for the whole environment (a revision, new delivery settings, a
-- write of more users than one row keeps). The tick deletes rows older than an hour; a server
-- further behind reads the whole environment as changed.
CREATE TABLE environment_changes (
    environment_id INTEGER NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
    sequence INTEGER NOT NULL CHECK (sequence > 0),
    users TEXT,
    -- 1 when what everyone is served changed (a revision, delivery settings): servers read such a
    -- step at once; a step of per-user writes alone within their poll interval.
    delivery INTEGER NOT NULL DEFAULT 0 CHECK (delivery IN (0, 1)),
    -- Milliseconds since 1970.
    changed_at INTEGER NOT NULL,
    PRIMARY KEY (environment_id, sequence)
);

CREATE INDEX environment_changes_by_time ON environment_changes (changed_at);

-- A step is one statement: its row carries the next number, which the environment takes here.
CREATE TRIGGER environment_changes_advance AFTER INSERT ON environment_changes
BEGIN
    UPDATE environments SET change_sequence = NEW.sequence WHERE id = NEW.environment_id;
END;

-- How many recorded users a revision moved between groups, where its change planned that (an
-- import, an edit, a bias change, a ramp's step, a rule change); NULL for other revisions and those
-- written before this column. The audit feed and `revision.created` report it.
ALTER TABLE revisions ADD COLUMN moved_users INTEGER CHECK (moved_users >= 0);

-- Delivered and given-up deliveries are deleted by age (`--keep-deliveries`, 30 days by default).
CREATE INDEX webhook_deliveries_by_state_and_time ON webhook_deliveries (state, created_at);
