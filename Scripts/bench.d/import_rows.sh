# import_rows.sh IMPORTED_DB: prints the import baseline's SQL, bench.d/import_schema.sql's rows as a
# new user would insert them: one INSERT statement per row, in one transaction, holding exactly
# what one flagpole import wrote (the revision with the whole file's text, every feature and
# variation, one audit row per feature), with flagpole's connection settings.
db=$1
echo "PRAGMA foreign_keys = ON; PRAGMA cache_size = -65536; PRAGMA temp_store = MEMORY; PRAGMA synchronous = NORMAL;"
echo "BEGIN IMMEDIATE;"
sqlite3 -batch "$db" <<'SQL'
.mode insert revisions
SELECT id, number, created_at, CAST(document AS TEXT) FROM revisions ORDER BY id;
.mode insert features
SELECT id, name, position, description, section, development, enabled, unlocked, type_json FROM features ORDER BY id;
.mode insert variations
SELECT feature_id, position, name, bias, label FROM variations ORDER BY id;
.mode insert audit
SELECT id, revision_id, feature_name, change, after_json FROM audit WHERE feature_name IS NOT NULL ORDER BY id;
SQL
echo "COMMIT;"
