# Scripts/bench's "serve-streams" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

# FLAGPOLE_BENCH_STREAMS change streams open on one server (bench.d/streams.py): the server's
# memory per stream, and how long one write takes to reach the last of them.
bench_serve_streams() {
    local db="$WORK/serve-streams.sqlite" key result
    fresh_copy "$db" "$WORK/imported.sqlite"
    key=$("$FLAGPOLE" key create --tenant "$TENANT" --role editor --name bench --db "$db" 2>/dev/null)
    log "Starting flagpole serve for $(thousands "$STREAMS") change streams"
    start_flagpole "$db" "$WORK/serve-streams.log"
    result=$(python3 "$HELPERS/streams.py" "$SERVE_URL/t/$TENANT/$ENVIRONMENT/changes" "$STREAMS" "$SERVE_PID" \
        "curl -sS -f -X PUT -H 'Authorization: Bearer $key' --data '{\"type\": \"int\", \"default\": 1}' '$SERVE_URL/api/v1/tenants/$TENANT/environments/$ENVIRONMENT/configs/streamed'") \
        || die "serve-streams: $result"
    running "$SERVE_PID" || die "flagpole serve died with $STREAMS streams open: $(tail -5 "$WORK/serve-streams.log")"
    stop_server "$SERVE_PID" || failed ERRORS "serve-streams: flagpole serve exited with status $? on SIGTERM"
    local per_stream last first
    local write
    read -r per_stream write first last < <(python3 -c 'import json, sys; r = json.loads(sys.argv[1]); print(r["kib_per_stream"], r["write_ms"], r["first_event_ms"], r["last_event_ms"])' "$result")
    report_limit_row "change streams: $(thousands "$STREAMS") open on one server" \
        "$per_stream KiB of RSS per stream; from a write's request ($write ms with its answer) to the first stream's event $first ms, the last's $last ms" "–" "$last" '>=' 0 "reported"
    NOTES+=("serve-streams: \`flagpole serve\` on a copy of the import row's database; bench.d/streams.py opens $(thousands "$STREAMS") streams (GET /t/$TENANT/$ENVIRONMENT/changes, Python asyncio, 500 at a time), reads the server's VmRSS before and after, then PUTs a config through the admin API and times until every stream has its event: $result.")
}
