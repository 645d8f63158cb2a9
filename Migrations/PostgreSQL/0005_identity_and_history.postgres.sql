-- Flagpole schema, version 5, for PostgreSQL (types as in 0001): feature names compared as the
-- app compares them, assignments keyed by point, the assignment history in aggregate, and a
-- generation that every restore changes.

-- The app decodes names into Swift strings, so two canonically equivalent names ("caf\u00e9" and
-- "cafe\u0301") are one name on a device. `name_key` is the name's NFC form, the form Swift's
-- string equality compares: lookups and uniqueness go by it, while `name` keeps the bytes as
-- written for export. The store fills it on every write.
-- No data step: the SQLite migration is followed by a Swift step that fills name_key for the
-- rows already there, but a PostgreSQL database always starts empty, so there are none. (Nor a
-- generated column from normalize(name, NFC): the key must be the store's NFC, that of Swift's
-- Unicode tables, whatever the server's version of Unicode.)
ALTER TABLE features ADD COLUMN name_key text COLLATE "C";
-- NULL until filled; two rows of one environment never share a key once they have one.
-- (NULLs are distinct in a unique index, in PostgreSQL as in SQLite.)
CREATE UNIQUE INDEX features_by_name_key ON features(environment_id, name_key);

-- Assignments keyed by (feature, point, user). A user's point is a function of the feature's salt
-- and the user's id, so the key finds a user as well as (feature, user) did, and it orders each
-- feature's users by point, which re-evaluation reads by range: one B-tree where there were two.
-- (feature, user) stays unique: two rows of one user would need two points for one (salt, id);
-- as in SQLite, no constraint says so.
-- SQLite rebuilds the table (copy, drop, rename), which drops assignments_by_point with the old
-- table; here the key is changed in place and that index dropped, to the same end state.
ALTER TABLE assignments DROP CONSTRAINT assignments_pkey;
ALTER TABLE assignments ADD PRIMARY KEY (feature_id, point, user_id);
DROP INDEX assignments_by_point;

-- The net change of a test's recorded users per variation and minute: +1 for every event into
-- the variation, -1 for every event out of it. Summed up to a minute, it gives the users each
-- variation held at that minute's end, so the distribution of a test over time reads a few
-- rows per minute rather than replaying millions of events. The triggers below keep it, in the
-- statement that writes the events, so no write can forget it (0006 drops them).
CREATE TABLE assignment_deltas (
    tenant_id bigint NOT NULL,
    environment_id bigint NOT NULL,
    feature_id bigint NOT NULL,
    -- Unix minutes (the events' created_at / 60000).
    minute bigint NOT NULL,
    variation text COLLATE "C" NOT NULL,
    users bigint NOT NULL,
    PRIMARY KEY (feature_id, minute, variation),
    FOREIGN KEY (feature_id, environment_id, tenant_id) REFERENCES features(id, environment_id, tenant_id) ON DELETE CASCADE
);
-- SQLite fills it here from the events already recorded; a PostgreSQL database has none.

-- SQLite's triggers, as PL/pgSQL trigger functions of the same names. bigint / integer truncates
-- toward zero, as SQLite's integer division does. An AFTER trigger's result is ignored: NULL.
CREATE FUNCTION assignment_events_count_in() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO assignment_deltas AS d (tenant_id, environment_id, feature_id, minute, variation, users)
    VALUES (NEW.tenant_id, NEW.environment_id, NEW.feature_id, NEW.created_at / 60000, NEW.variation, 1)
    ON CONFLICT (feature_id, minute, variation) DO UPDATE SET users = d.users + 1;
    RETURN NULL;
END;
$$;

CREATE FUNCTION assignment_events_count_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO assignment_deltas AS d (tenant_id, environment_id, feature_id, minute, variation, users)
    VALUES (NEW.tenant_id, NEW.environment_id, NEW.feature_id, NEW.created_at / 60000, NEW.previous_variation, -1)
    ON CONFLICT (feature_id, minute, variation) DO UPDATE SET users = d.users - 1;
    RETURN NULL;
END;
$$;

CREATE TRIGGER assignment_events_count_in AFTER INSERT ON assignment_events
    FOR EACH ROW EXECUTE FUNCTION assignment_events_count_in();

CREATE TRIGGER assignment_events_count_out AFTER INSERT ON assignment_events
    FOR EACH ROW WHEN (NEW.previous_variation IS NOT NULL) EXECUTE FUNCTION assignment_events_count_out();

-- One row. A restore replaces every table, this one with a new generation, so a running server
-- notices that revision numbers it has cached may now hold other documents.
-- (The id is always 1, never generated: plain bigint rather than an identity.)
CREATE TABLE store_generation (
    id bigint PRIMARY KEY CHECK (id = 1),
    generation bigint NOT NULL
);
INSERT INTO store_generation (id, generation) VALUES (1, 0);
