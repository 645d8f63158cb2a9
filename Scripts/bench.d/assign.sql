-- The baseline for `flagpole assign --users-file`: the sqlite3 shell inserting the very rows
-- flagpole inserts (user, point, variation, taken from a `flagpole assign --json` run) into the
-- same tables with the same indexes, as fast as the shell can: one transaction, the rows
-- loaded by .import into a temporary table, then one INSERT … SELECT per table.
--
-- The connection is set up as flagpole's: foreign keys on, a 64 MiB page cache
-- (FeatureStore.cacheKilobytes), temporary tables in memory, and synchronous=NORMAL in WAL
-- mode (what GRDB sets for a DatabasePool; the database file is already in WAL mode).
-- :tenant_id, :environment_id, :feature_id, :revision and :csv are replaced by Scripts/bench.
PRAGMA foreign_keys = ON;
PRAGMA cache_size = -65536;
PRAGMA temp_store = MEMORY;
PRAGMA synchronous = NORMAL;
BEGIN IMMEDIATE;
CREATE TEMP TABLE incoming (user_id TEXT NOT NULL, point REAL NOT NULL, variation TEXT NOT NULL);
.import --csv :csv incoming
INSERT INTO assignments (tenant_id, environment_id, feature_id, revision, assigned_at, user_id, point, variation)
SELECT :tenant_id, :environment_id, :feature_id, :revision, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER),
       user_id, point, variation
  FROM temp.incoming WHERE true
    ON CONFLICT (feature_id, point, user_id) DO NOTHING;
INSERT INTO assignment_events (tenant_id, environment_id, feature_id, revision, created_at, user_id, point, variation, reason)
SELECT :tenant_id, :environment_id, :feature_id, :revision, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER),
       user_id, point, variation, 'first'
  FROM temp.incoming;
COMMIT;
