-- Flagpole schema, version 5: feature names compared as the app compares them, the assignment
-- history in aggregate, and a generation that every restore changes.

-- The app decodes names into Swift strings, so two canonically equivalent names ("caf\u00e9" and
-- "cafe\u0301") are one name on a device. `name_key` is the name's NFC form, the form Swift's
-- string equality compares: lookups and uniqueness go by it, while `name` keeps the bytes as
-- written for export. The store fills it on every write (and for the rows already here, right
-- after this file, since SQLite can't normalise Unicode).
ALTER TABLE features ADD COLUMN name_key TEXT;
-- NULL until filled; two rows of one environment never share a key once they have one.
CREATE UNIQUE INDEX features_by_name_key ON features(environment_id, name_key);

-- The net change of a test's recorded users per variation and minute: +1 for every event into
-- the variation, -1 for every event out of it. Summed up to a minute, it gives the users each
-- variation held at that minute's end, so the distribution of a test over time reads a few
-- rows per minute rather than replaying millions of events. The triggers below keep it, in the
-- statement that writes the events, so no write can forget it.
CREATE TABLE assignment_deltas (
    tenant_id INTEGER NOT NULL,
    environment_id INTEGER NOT NULL,
    feature_id INTEGER NOT NULL,
    -- Unix minutes (the events' created_at / 60000).
    minute INTEGER NOT NULL,
    variation TEXT NOT NULL,
    users INTEGER NOT NULL,
    PRIMARY KEY (feature_id, minute, variation),
    FOREIGN KEY (feature_id, environment_id, tenant_id) REFERENCES features(id, environment_id, tenant_id) ON DELETE CASCADE
) WITHOUT ROWID;

INSERT INTO assignment_deltas (tenant_id, environment_id, feature_id, minute, variation, users)
SELECT tenant_id, environment_id, feature_id, minute, variation, sum(users) FROM (
    SELECT tenant_id, environment_id, feature_id, created_at / 60000 AS minute, variation, 1 AS users
    FROM assignment_events
    UNION ALL
    SELECT tenant_id, environment_id, feature_id, created_at / 60000, previous_variation, -1
    FROM assignment_events WHERE previous_variation IS NOT NULL)
GROUP BY feature_id, minute, variation
HAVING sum(users) <> 0;

CREATE TRIGGER assignment_events_count_in AFTER INSERT ON assignment_events
BEGIN
    INSERT INTO assignment_deltas (tenant_id, environment_id, feature_id, minute, variation, users)
    VALUES (NEW.tenant_id, NEW.environment_id, NEW.feature_id, NEW.created_at / 60000, NEW.variation, 1)
    ON CONFLICT (feature_id, minute, variation) DO UPDATE SET users = users + 1;
END;

CREATE TRIGGER assignment_events_count_out AFTER INSERT ON assignment_events WHEN NEW.previous_variation IS NOT NULL
BEGIN
    INSERT INTO assignment_deltas (tenant_id, environment_id, feature_id, minute, variation, users)
    VALUES (NEW.tenant_id, NEW.environment_id, NEW.feature_id, NEW.created_at / 60000, NEW.previous_variation, -1)
    ON CONFLICT (feature_id, minute, variation) DO UPDATE SET users = users - 1;
END;

-- One row. A restore replaces every table, this one with a new generation, so a running server
-- notices that revision numbers it has cached may now hold other documents.
CREATE TABLE store_generation (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    generation INTEGER NOT NULL
);
INSERT INTO store_generation (id, generation) VALUES (1, 0);
