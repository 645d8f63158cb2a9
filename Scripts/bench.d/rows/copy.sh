# Scripts/bench's "copy" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

bench_copy() {
    local source="$WORK/copy-source.sqlite" back="$WORK/copy-back.sqlite" baseline_back="$WORK/copy-baseline.sqlite"
    local server dir url baseline_url tables rows start end there_ms back_ms there_base_ms back_base_ms table columns
    # The history's events, and its users recorded in a test, as a store that has served them holds them.
    log "Recording the history's $(thousands "$USERS") users in a test"
    fresh_copy "$source" "$WORK/history.sqlite"
    seq 0 $((USERS - 1)) | sed 's/^/user-/' >"$WORK/copy-users.txt"
    "$FLAGPOLE" assign --feature bench_checkout_test --users-file "$WORK/copy-users.txt" --tenant "$TENANT" --db "$source" >/dev/null
    checkpoint "$source"
    server=$("$ROOT/Scripts/postgres" start --owner-pid $$) || die "copy: Scripts/postgres could not start a server"
    url=$(sed -n 1p <<<"$server")
    dir=$(sed -n 2p <<<"$server")
    baseline_url="${url%/*}/baseline"
    psql -q -d "$url" -c "CREATE DATABASE baseline" >/dev/null
    "$FLAGPOLE" migrate --db "$baseline_url" >/dev/null
    tables=$(sqlite3 -bail "$source" "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
                                        AND name <> 'grdb_migrations' ORDER BY rowid")
    rows=$(for table in $tables; do sql_value "$source" "SELECT count(*) FROM \"$table\""; done | awk '{ s += $1 } END { print s }')

    log "flagpole copy: $(thousands "$rows") rows to PostgreSQL"
    start=$(date +%s%N)
    "$FLAGPOLE" copy --from "$source" --to "$url" >"$OUT/copy-there.txt" || failed "COPY FAILED" "copy: to PostgreSQL failed"
    end=$(date +%s%N)
    there_ms=$(( (end - start) / 1000000 ))
    log "The same tables through sqlite3 and psql"
    start=$(date +%s%N)
    for table in $tables; do
        # Blobs as bytea's hex input (NULL kept: an unquoted empty field); the rest as sqlite3 writes CSV.
        columns=$(sql_value "$source" "SELECT group_concat(CASE WHEN type = 'BLOB' THEN 'CASE WHEN \"' || name || '\" IS NULL THEN NULL ELSE ''\\x'' || hex(\"' || name || '\") END'
                                                             ELSE '\"' || name || '\"' END, ', ') FROM pragma_table_info('$table')")
        sqlite3 -bail -csv "$source" "SELECT $columns FROM \"$table\"" >"$WORK/copy-$table.csv"
    done
    {
        echo "SET session_replication_role = replica;"  # no foreign-key triggers: the tools check nothing
        echo "TRUNCATE $(echo $tables | sed 's/ /, /g');"
        for table in $tables; do echo "\\copy \"$table\" FROM '$WORK/copy-$table.csv' WITH (FORMAT csv)"; done
    } | psql -q -v ON_ERROR_STOP=1 -d "$baseline_url" >/dev/null || failed "BASELINE FAILED" "copy: the psql baseline failed"
    end=$(date +%s%N)
    rm -f "$WORK"/copy-*.csv
    there_base_ms=$(( (end - start) / 1000000 ))
    report_throughput_row "\`flagpole copy\` SQLite → PostgreSQL, $(thousands "$USERS") users and $(thousands "$EVENTS") events, checked" \
        "$rows" rows "$there_ms" "$there_base_ms" 0.5

    log "flagpole copy: back to a new SQLite file"
    start=$(date +%s%N)
    "$FLAGPOLE" copy --from "$url" --to "$back" >"$OUT/copy-back.txt" || failed "COPY FAILED" "copy: from PostgreSQL failed"
    end=$(date +%s%N)
    back_ms=$(( (end - start) / 1000000 ))
    start=$(date +%s%N)
    for table in $tables; do
        # Into tables .import makes from the header, without constraints: the raw cost of moving
        # the rows, as psql hands them over (booleans as t and f, bytea as \x… text, NULL as '').
        psql -q -d "$url" -c "\\copy \"$table\" TO STDOUT WITH (FORMAT csv, HEADER)" >"$WORK/copy-$table.csv" \
            || failed "BASELINE FAILED" "copy: psql could not read $table"
        sqlite3 -bail "$baseline_back" ".import --csv '$WORK/copy-$table.csv' \"$table\"" \
            || failed "BASELINE FAILED" "copy: sqlite3 could not import $table"
        rm -f "$WORK/copy-$table.csv"
    done
    end=$(date +%s%N)
    back_base_ms=$(( (end - start) / 1000000 ))
    report_throughput_row "\`flagpole copy\` PostgreSQL → SQLite, the same rows, checked" \
        "$rows" rows "$back_ms" "$back_base_ms" 0.5
    "$ROOT/Scripts/postgres" stop "$dir"
    NOTES+=("copy: the history database (the history row's $(thousands "$EVENTS") assignment events, and its $(thousands "$USERS") users recorded in a test: $(thousands "$rows") rows in all) copied by \`flagpole copy\` to a throwaway PostgreSQL $(psql --version | awk '{ print $3 }') on loopback (Scripts/postgres: fsync off) and back to a new SQLite file; each copy reads in one transaction, writes, reads the destination back and compares every table's rows and SHA-256 before keeping it. Baselines, in the same run, move the same tables without checking anything: \`sqlite3 -csv\` (blobs in hex) into psql's \`\\copy … FROM\` (foreign-key triggers off), and psql's \`\\copy … TO STDOUT\` into sqlite3's \`.import\` of new tables without constraints.")
}
