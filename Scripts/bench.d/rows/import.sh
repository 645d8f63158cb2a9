# Scripts/bench's "import" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

# The import of the generated file into an empty environment, each run on a fresh copy, beside
# bench.d/import.sql reading the same file into an empty minimal schema.
bench_import() {
    local ours="$WORK/import-flagpole.sqlite" theirs="$WORK/import-baseline.sqlite" dumps="$WORK/import-dump"
    # The issue's baseline: the rows one import wrote, inserted by the shell as a new user would.
    bash "$HELPERS/import_rows.sh" "$WORK/imported.sqlite" >"$WORK/import-rows.sql"
    time_pair import "$(fresh_copy_command "$ours")" \
        "$(printf '%q import %q --tenant %q --db %q > /dev/null' "$FLAGPOLE" "$WORK/features.json" "$TENANT" "$ours")" \
        "$(printf 'sqlite3 -bail %q < %q' "$theirs" "$WORK/import-rows.sql")" \
        "$RUNS" "$(fresh_copy_command "$theirs" "$WORK/pristine-baseline.sqlite")"
    IMPORT_BASELINE_MS=$BASELINE_MS
    compare_import_rows "$ours" "$theirs" "$dumps" "import"
    report_row "import ($FEATURES features)" "$FLAGPOLE_MS" "$BASELINE_MS" 1.5
    NOTES+=("import: \`flagpole import\` into a fresh copy of an empty environment. Baseline: the sqlite3 shell inserting the rows that import wrote (bench.d/import_rows.sh: the revision's row with the whole file's text, $(thousands "$(wc -l <"$dumps-baseline-features.txt")") features, $(thousands "$(wc -l <"$dumps-baseline-variations.txt")") variations and an audit row per feature, one INSERT each) into bench.d/import_schema.sql's minimal tables in one transaction, with flagpole's connection settings; both sides' rows and documents compared after the timed runs.")
    # A second way a new user could load the file: SQLite's own JSON functions, no statement per row.
    render_sql "$HELPERS/import.sql" "$WORK/import.sql" file="$WORK/features.json"
    local ours_ms=$FLAGPOLE_MS
    time_pair import-json-each "$(fresh_copy_command "$ours")" \
        "$(printf '%q import %q --tenant %q --db %q > /dev/null' "$FLAGPOLE" "$WORK/features.json" "$TENANT" "$ours")" \
        "$(printf 'sqlite3 -bail %q < %q' "$theirs" "$WORK/import.sql")" \
        "$RUNS" "$(fresh_copy_command "$theirs" "$WORK/pristine-baseline.sqlite")"
    compare_import_rows "$ours" "$theirs" "$dumps-json-each" "import (json_each)"
    NOTES+=("import, beside bench.d/import.sql (the shell reading the file with json_each into the same tables, no statement per row): flagpole $FLAGPOLE_MS ms, the shell $BASELINE_MS ms, $(python3 -c "print(f'{$FLAGPOLE_MS / $BASELINE_MS:.2f}')")× (not a target; the row above is $ours_ms ms).")
}

# compare_import_rows OURS THEIRS DUMPS LABEL: the same features, variations, audit rows and
# document in flagpole's database and the baseline's, after the timed runs.
compare_import_rows() {
    local ours=$1 theirs=$2 dumps=$3 label=$4 table query
    log "Comparing the rows flagpole and the baseline wrote ($label)"
    for table in features variations audit; do
        case $table in
            features) query="SELECT name, position, description, section, development, enabled, unlocked, json(type_json)
                               FROM features WHERE position IS NOT NULL ORDER BY position" ;;
            variations) query="SELECT f.name, v.position, v.name, quote(v.bias), v.label
                                 FROM variations v JOIN features f ON f.id = v.feature_id ORDER BY f.position, v.position" ;;
            audit) query="SELECT feature_name, change FROM audit WHERE feature_name IS NOT NULL ORDER BY feature_name" ;;
        esac
        sqlite3 -bail "$ours" "$query" >"$dumps-flagpole-$table.txt"
        sqlite3 -bail "$theirs" "$query" >"$dumps-baseline-$table.txt"
        same_rows "$label: $table" "$dumps-flagpole-$table.txt" "$dumps-baseline-$table.txt" || true
    done
    sqlite3 -bail "$ours" "SELECT writefile('$dumps-flagpole.json', document) FROM revisions" >/dev/null
    sqlite3 -bail "$theirs" "SELECT writefile('$dumps-baseline.json', document) FROM revisions" >/dev/null
    same_json "$label: the revisions' documents" "$dumps-flagpole.json" "$dumps-baseline.json" "$WORK/features.json" || true
}
