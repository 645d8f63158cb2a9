-- The baseline for `flagpole import` into an empty environment: the sqlite3 shell reading the
-- same file into import_schema.sql's tables as a new user would, in one transaction: the
-- revision's row holding the whole JSON text, then its features (read once with json_each into
-- a temporary table), their variations, and one audit row per feature.
--
-- The connection is set up as flagpole's: foreign keys on, a 64 MiB page cache
-- (FeatureStore.cacheKilobytes), temporary tables in memory, and synchronous=NORMAL in WAL
-- mode (what GRDB sets for a DatabasePool; the database file is already in WAL mode).
-- :file is replaced by Scripts/bench.
PRAGMA foreign_keys = ON;
PRAGMA cache_size = -65536;
PRAGMA temp_store = MEMORY;
PRAGMA synchronous = NORMAL;
BEGIN IMMEDIATE;
INSERT INTO revisions (number, created_at, document)
SELECT ifnull(max(number), 0) + 1, strftime('%Y-%m-%dT%H:%M:%fZ'), CAST(readfile(':file') AS TEXT) FROM revisions;
CREATE TEMP TABLE incoming AS
SELECT f.key AS position, f.value AS feature
  FROM revisions r, json_each(r.document, '$.features') f
 WHERE r.number = (SELECT max(number) FROM revisions);
INSERT INTO features (name, position, description, section, development, enabled, unlocked, type_json)
SELECT feature ->> 'name', position, feature ->> 'description', feature ->> 'section', feature ->> 'development',
       feature ->> 'enabled', feature ->> 'unlocked', feature -> 'type'
  FROM temp.incoming;
-- A row per position of test-variations (in the generated file, test-biases and labels have
-- the same length; a null label stays NULL).
INSERT INTO variations (feature_id, position, name, bias, label)
SELECT f.id, v.key, v.value, json_extract(i.feature, '$.test-biases[' || v.key || ']'),
       json_extract(i.feature, '$.labels[' || v.key || ']')
  FROM temp.incoming i JOIN features f ON f.name = i.feature ->> 'name', json_each(i.feature, '$.test-variations') v;
INSERT INTO audit (revision_id, feature_name, change, after_json)
SELECT (SELECT max(id) FROM revisions), feature ->> 'name', 'added', feature FROM temp.incoming;
COMMIT;
