# Scripts/bench's "bias" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

# A bias change over the USERS users recorded by prepare_assignments: 10/90 → 20/80, so the
# users with points in [10, 20) move from B to A (about 10 %).
bench_bias() {
    local source="$WORK/assigned.sqlite" ours="$WORK/bias-flagpole.sqlite" theirs="$WORK/bias-baseline.sqlite"
    local dumps="$WORK/bias-dump" revision moving
    revision=$(sql_value "$source" "SELECT max(number) + 1 FROM revisions
                                     WHERE environment_id = (SELECT environment_id FROM features WHERE id = $TEST_ID)")
    moving=$(sql_value "$source" "SELECT count(*) FROM assignments
                                   WHERE feature_id = $TEST_ID AND point >= 10 AND point < 20 AND variation <> 'A'")
    render_sql "$HELPERS/bias.sql" "$WORK/bias.sql" feature_id="$TEST_ID" revision="$revision" lower=10 upper=20 variation=A
    time_pair bias "$(fresh_copy_command "$ours" "$source")" \
        "$(printf '%q bias set %q 20 80 --tenant %q --db %q > /dev/null' "$FLAGPOLE" "$TEST" "$TENANT" "$ours")" \
        "$(printf 'sqlite3 -bail %q < %q' "$theirs" "$WORK/bias.sql")" \
        "$BULK_RUNS" "$(fresh_copy_command "$theirs" "$source")"
    log "Comparing the assignments and events after the bias change"
    dump_assignments "$ours" "$dumps-flagpole.txt"
    dump_assignments "$theirs" "$dumps-baseline.txt"
    dump_events "$ours" bias "$dumps-flagpole-events.txt"
    dump_events "$theirs" bias "$dumps-baseline-events.txt"
    same_rows "bias: assignments" "$dumps-flagpole.txt" "$dumps-baseline.txt" || true
    same_rows "bias: 'bias' events" "$dumps-flagpole-events.txt" "$dumps-baseline-events.txt" || true
    report_row "bias 10/90 → 20/80 ($(thousands "$moving") of $(thousands "$USERS") users move)" "$FLAGPOLE_MS" "$BASELINE_MS" 2.0
    NOTES+=("bias: \`flagpole bias set $TEST 20 80\` on a fresh copy of the database the untimed assign left. Baseline: bench.d/bias.sql, one transaction with an INSERT … SELECT of an event per moving user and the UPDATE of their assignments, the least SQL that leaves the same rows; flagpole also counts the movers first (the plan it prints) and writes the new revision (document and audit rows). Identical assignments and $(thousands "$(wc -l <"$dumps-flagpole-events.txt")") 'bias' events after the timed runs.")
}
