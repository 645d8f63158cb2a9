# Scripts/bench's "ramp" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

# A ramp's step over the USERS users recorded by prepare_assignments, applied by `flagpole tick`,
# beside the same bias change made by hand (`bias set`, the bias row's command) in the same run:
# both 10/90 → 20/80 on fresh copies of one database where the ramp's first step is due.
bench_ramp() {
    local source="$WORK/ramped.sqlite" ours="$WORK/ramp-tick.sqlite" theirs="$WORK/ramp-by-hand.sqlite"
    local clock="$WORK/ramp-clock" dumps="$WORK/ramp-dump" moving
    fresh_copy "$source" "$WORK/assigned.sqlite"
    # A ramp of A (10 %) whose first step, 20 %, is due at the clock's time: nothing applied yet.
    "$FLAGPOLE" ramp create "$TEST" --variation A --steps 20,100 --hold 24h --start 2030-01-01T00:00:00Z \
        --tenant "$TENANT" --db "$source" >/dev/null
    checkpoint "$source"
    echo 2030-01-01T00:00:00Z >"$clock"
    moving=$(sql_value "$source" "SELECT count(*) FROM assignments
                                   WHERE feature_id = $TEST_ID AND point >= 10 AND point < 20 AND variation <> 'A'")
    time_pair ramp "$(fresh_copy_command "$ours" "$source")" \
        "$(printf 'FLAGPOLE_CLOCK_FILE=%q %q tick --db %q > /dev/null' "$clock" "$FLAGPOLE" "$ours")" \
        "$(printf '%q bias set %q 20 80 --tenant %q --db %q > /dev/null' "$FLAGPOLE" "$TEST" "$TENANT" "$theirs")" \
        "$BULK_RUNS" "$(fresh_copy_command "$theirs" "$source")"
    log "Comparing the assignments and events after the step and the change by hand"
    dump_assignments "$ours" "$dumps-tick.txt"
    dump_assignments "$theirs" "$dumps-by-hand.txt"
    dump_events "$ours" bias "$dumps-tick-events.txt"
    dump_events "$theirs" bias "$dumps-by-hand-events.txt"
    same_rows "ramp: assignments" "$dumps-tick.txt" "$dumps-by-hand.txt" || true
    same_rows "ramp: 'bias' events" "$dumps-tick-events.txt" "$dumps-by-hand-events.txt" || true
    report_row "ramp step 10 → 20 % by \`tick\` ($(thousands "$moving") of $(thousands "$USERS") users move)" \
        "$FLAGPOLE_MS" "$BASELINE_MS" 1.2
    NOTES+=("ramp: \`flagpole tick\` applying a ramp's due step (A 10 → 20 %) on a fresh copy of a database holding the ramp, beside \`flagpole bias set $TEST 20 80\` on another copy of the same database, in the same run: the baseline is the change made by hand, so the ratio is what the ramp adds (its row, its reads, the clock, the process start of either). Identical assignments and $(thousands "$(wc -l <"$dumps-tick-events.txt")") 'bias' events after the timed runs.")
}
