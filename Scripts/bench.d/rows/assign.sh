# Scripts/bench's "assign" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

# Bulk assignment of USERS users new to a test, each run on a fresh copy of the tests database,
# beside bench.d/assign.sql on a fresh copy of the minimal schema.
bench_assign() {
    local ours="$WORK/assign-flagpole.sqlite" theirs="$WORK/assign-baseline.sqlite" dumps="$WORK/assign-dump"
    time_pair assign "$(fresh_copy_command "$ours" "$WORK/tests.sqlite")" \
        "$(printf '%q assign --feature %q --users-file %q --tenant %q --db %q > /dev/null' \
            "$FLAGPOLE" "$TEST" "$WORK/users.txt" "$TENANT" "$ours")" \
        "$(printf 'sqlite3 -bail %q < %q' "$theirs" "$WORK/assign.sql")" \
        "$BULK_RUNS" "$(fresh_copy_command "$theirs" "$WORK/assign-pristine.sqlite")"
    # What the last timed runs left: the same users, points and groups, and the same events.
    log "Comparing the assignments flagpole and the baseline recorded"
    dump_assignments "$WORK/assigned.sqlite" "$dumps-reference.txt"
    dump_assignments "$ours" "$dumps-flagpole.txt"
    dump_assignments "$theirs" "$dumps-baseline.txt"
    dump_events "$ours" first "$dumps-flagpole-events.txt"
    dump_events "$theirs" first "$dumps-baseline-events.txt"
    same_rows "assign: assignments of the timed and the --json run" "$dumps-flagpole.txt" "$dumps-reference.txt" || true
    same_rows "assign: assignments" "$dumps-flagpole.txt" "$dumps-baseline.txt" || true
    same_rows "assign: 'first' events" "$dumps-flagpole-events.txt" "$dumps-baseline-events.txt" || true
    report_throughput_row "assign ($(thousands "$USERS") new users)" "$USERS" users "$FLAGPOLE_MS" "$BASELINE_MS" 0.7
    NOTES+=("assign: \`flagpole assign --feature $TEST --users-file\` of $(thousands "$USERS") users, on a fresh copy of a database holding only the tests of bench.d/assignment_features.json. Baseline: bench.d/assign.sql, the sqlite3 shell \`.import\`ing the rows flagpole writes (user, point, variation, from an untimed \`assign --json\`) into a temporary table and copying them with one INSERT … SELECT per table into bench.d/assign_schema.sql's minimal tables (flagpole's keys and indexes: assignments keyed by (feature_id, point, user_id), events with their three indexes; no deltas table, which flagpole updates once per variation), in one transaction with flagpole's connection settings. $(thousands "$(wc -l <"$dumps-flagpole.txt")") assignments and $(thousands "$(wc -l <"$dumps-flagpole-events.txt")") 'first' events each, compared after the timed runs (points to 17 digits).")
}
