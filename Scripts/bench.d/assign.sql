-- The baseline for `flagpole assign --users-file`: the sqlite3 shell inserting the rows flagpole
-- inserts (user, point, variation, taken from a `flagpole assign --json` run) into
-- assign_schema.sql's tables, as fast as the shell can: one transaction, the rows loaded by
-- .import into a temporary table, then one INSERT … SELECT per table.
--
-- Connection set up as flagpole's (see import.sql).
-- :environment_id, :feature_id, :revision and :csv are replaced by Scripts/bench.
PRAGMA foreign_keys = ON;
PRAGMA cache_size = -65536;
PRAGMA temp_store = MEMORY;
PRAGMA synchronous = NORMAL;
BEGIN IMMEDIATE;
CREATE TEMP TABLE incoming (user_id TEXT NOT NULL, point REAL NOT NULL, variation TEXT NOT NULL);
.import --csv :csv incoming
INSERT INTO assignments (feature_id, revision, assigned_at, user_id, point, variation)
SELECT :feature_id, :revision, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), user_id, point, variation
  FROM temp.incoming WHERE true
    ON CONFLICT (feature_id, point, user_id) DO NOTHING;
INSERT INTO assignment_events (environment_id, feature_id, revision, created_at, user_id, point, variation, reason)
SELECT :environment_id, :feature_id, :revision, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER),
       user_id, point, variation, 'first'
  FROM temp.incoming;
COMMIT;
