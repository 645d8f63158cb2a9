-- Flagpole schema, version 5: feature names compared as the app compares them, assignments keyed
-- by point, the assignment history in aggregate, and a generation that every restore changes.

-- The app decodes names into Swift strings, so two canonically equivalent names ("caf\u00e9" and
-- "cafe\u0301") are one name on a device. `name_key` is the name's NFC form, the form Swift's
-- string equality compares: lookups and uniqueness go by it, while `name` keeps the bytes as
-- written for export. The store fills it on every write (and for the rows already here, right
-- after this file, since SQLite can't normalise Unicode).
ALTER TABLE features ADD COLUMN name_key TEXT;
-- NULL until filled; two rows of one environment never share a key once they have one.
CREATE UNIQUE INDEX features_by_name_key ON features(environment_id, name_key);

-- Assignments keyed by (feature, point, user). A user's point is a function of the feature's salt
-- and the user's id, so the key finds a user as well as (feature, user) did, and it orders each
-- feature's users by point, which re-evaluation reads by range: one B-tree where there were two.
-- Points are random, so every first assignment wrote a random page of each; with one, recording
-- a user costs half the pages. (feature, user) stays unique: two rows of one user would need two
-- points for one (salt, id).
CREATE TABLE assignments_by_point_key (
    tenant_id INTEGER NOT NULL,
    environment_id INTEGER NOT NULL,
    feature_id INTEGER NOT NULL,
    user_id TEXT NOT NULL,
    -- murmur3(salt:user) scaled to [0, 100): fixed for the feature's life.
    point REAL NOT NULL CHECK (point >= 0 AND point < 100),
    variation TEXT NOT NULL,
    -- 1 while a QA override forces `variation`; re-evaluations leave such rows alone.
    is_override INTEGER NOT NULL DEFAULT 0 CHECK (is_override IN (0, 1)),
    -- The revision the variation was computed under.
    revision INTEGER NOT NULL,
    assigned_at INTEGER NOT NULL,
    PRIMARY KEY (feature_id, point, user_id),
    FOREIGN KEY (feature_id, environment_id, tenant_id) REFERENCES features(id, environment_id, tenant_id) ON DELETE CASCADE
) WITHOUT ROWID;
INSERT INTO assignments_by_point_key (tenant_id, environment_id, feature_id, user_id, point, variation, is_override, revision, assigned_at)
SELECT tenant_id, environment_id, feature_id, user_id, point, variation, is_override, revision, assigned_at FROM assignments;
DROP TABLE assignments;
ALTER TABLE assignments_by_point_key RENAME TO assignments;

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
