# Scripts/bench's "serve-assign" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

# bench_serve_assign BATCH: assignments recorded through the admin API under load, POSTs of BATCH users never seen
# before (bench.d/assign.lua), each request one transaction that records its users
# durably before the answer. The rate is what the database holds afterwards, not what wrk
# counted.
bench_serve_assign() {
    local batch=$1 db="$WORK/serve-assign.sqlite" key url code peak recorded events rate
    fresh_copy "$db" "$WORK/tests.sqlite"
    key=$("$FLAGPOLE" key create --tenant "$TENANT" --role editor --name bench --db "$db" 2>/dev/null)
    log "Starting flagpole serve"
    start_flagpole "$db" "$WORK/serve-assign.log"
    url="$SERVE_URL/api/v1/tenants/$TENANT/environments/$ENVIRONMENT/features/$TEST/assignments"
    # One request first: the key, the route and the body are right before wrk repeats them.
    code=$(curl -sS -o "$WORK/serve-assign-check.json" -w '%{http_code}' -H "Authorization: Bearer $key" \
        -H 'Content-Type: application/json' --data '{"users": ["check-1"]}' "$url")
    [ "$code" = 200 ] || die "POST $url answered $code: $(cat "$WORK/serve-assign-check.json")"
    run_wrk "serve-assign-$batch" "$url" "$HELPERS/assign.lua" "$key" "$batch"
    running "$SERVE_PID" || die "flagpole serve died under load: $(tail -5 "$WORK/serve-assign.log")"
    peak=$(peak_rss_mib "$SERVE_PID")
    # Stopped before counting: the requests in flight when wrk stopped are finished first.
    stop_server "$SERVE_PID" || failed ERRORS "serve-assign: flagpole serve exited with status $? on SIGTERM"
    recorded=$(sql_value "$db" "SELECT count(*) FROM assignments WHERE user_id GLOB 'load-*'")
    events=$(sql_value "$db" "SELECT count(*) FROM assignment_events WHERE reason = 'first' AND user_id GLOB 'load-*'")
    # Every answered request's users must be in the database (they may be more: requests in
    # flight at the end), each with the 'first' event of its assignment.
    if [ "$recorded" -lt $((WRK_REQUESTS * batch)) ] || [ "$events" -ne "$recorded" ]; then
        failed ERRORS "serve-assign: wrk got $(thousands "$WRK_REQUESTS") answers of $batch users, the database holds $(thousands "$recorded") of those users and $(thousands "$events") 'first' events"
    fi
    rate=$(awk -v n="$recorded" -v s="$WRK_SECONDS" 'BEGIN { printf "%.0f", n / s }')
    server_log_note serve-assign "$WORK/serve-assign.log"
    report_limit_row "serve-assign POST ($batch new users a request)" \
        "$(thousands "$rate") users/s ($(thousands "${WRK_RATE%.*}") requests/s, p99 $WRK_P99_MS ms); peak RSS $peak MiB" \
        "–" "$rate" '>=' 10000 "≥ 10 000 users/s"
    NOTES+=("serve-assign: \`flagpole serve --log-level warning\` on a fresh copy of the database of tests, loaded for $HTTP_SECONDS s by wrk (1 thread, $HTTP_CONNECTIONS connections) with POSTs of $batch new users each to the assignments of $TEST (bench.d/assign.lua, an editor key); $(thousands "$recorded") users and as many 'first' events in the database afterwards, over wrk's $WRK_SECONDS s: the $(thousands "$WRK_REQUESTS") requests wrk saw answered, and $(thousands $((recorded / batch - WRK_REQUESTS))) in flight when it stopped, which the server finished before stopping. Peak RSS (VmHWM) of the server after the run.")
}
