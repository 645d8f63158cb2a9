# Scripts/bench's "history" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

# A user's history (the newest 100 events) among EVENTS events, through flagpole's store: the
# package's `history` benchmark, one query an iteration over the sample, beside the shell's query.
bench_history() {
    local db="$WORK/history.sqlite" tenant_id environment_id figures p50 p99 users events baseline real mean
    figures=$(package_figure main history)
    read -r p50 p99 _ <<<"$figures"
    read -r users events <"$WORK/history-report.txt"
    read -r tenant_id environment_id <<<"$(scope_ids "$db")"
    render_sql "$HELPERS/history.sql" "$WORK/history.sql" tenant_id="$tenant_id" environment_id="$environment_id" \
        sample="$WORK/history-sample.txt"
    sqlite3 -bail "$db" <"$WORK/history.sql" >"$WORK/history-baseline.txt"
    baseline=$(sed -n '1p' "$WORK/history-baseline.txt")
    real=$(sed -n 's/^Run Time: real \([0-9.]*\).*/\1/p' "$WORK/history-baseline.txt")
    [ -n "$real" ] || die "no .timer line from the history baseline: $(cat "$WORK/history-baseline.txt")"
    mean=$(awk -v r="$real" -v n="$HISTORY_SAMPLE" 'BEGIN { printf "%.0f", r * 1e6 / n }')
    if [[ "$baseline" != "$users|$events|"* ]]; then
        NOTES+=("**history: flagpole read $events events for $users users, the sqlite3 query \`$baseline\`** (users|events|checksum).")
        MISMATCH=1
        DIFFERENCES=$((DIFFERENCES + 1))
    fi
    p50=$(awk -v v="$p50" 'BEGIN { printf "%.0f", v * 1000 }')
    p99=$(awk -v v="$p99" 'BEGIN { printf "%.0f", v * 1000 }')
    report_limit_row "history ($(thousands "$HISTORY_SAMPLE") users among $(thousands "$EVENTS") events)" \
        "p50 $p50 µs, p99 $p99 µs" "mean $mean µs" "$p99" '<=' 1000 "p99 ≤ 1000 µs"
    NOTES+=("history: the Benchmarks package's \`history\`, the store's query for a user's newest 100 events, one read transaction an iteration, round the $(thousands "$HISTORY_SAMPLE") random users of the sample ($(thousands "$events") events in all, counted in an untimed warm-up pass) in one process. Baseline: bench.d/history.sql, the same query run by the sqlite3 shell for the same users in one statement (no prepare, transaction or row hand-over per user: a floor), .timer's total / $(thousands "$HISTORY_SAMPLE") (1 ms resolution in total).")
}
