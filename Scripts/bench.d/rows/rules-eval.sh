# Scripts/bench's "rules-eval" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

# One user's evaluation against 1 000 tests with five rules each (OFREP bulk, every flag), beside
# the same 1 000 tests without rules in another environment of the same server.
bench_rules_eval() {
    local db="$WORK/rules-eval.sqlite" app=ruled members editor base p50 p99 p50_without p99_without
    local tests=1000 users=100
    members='"country": "DE", "appVersion": "5.2.1"'
    python3 "$HELPERS/targeting.py" features "$tests" >"$WORK/ruled.json"
    "$FLAGPOLE" tenant create "$app" --db "$db" >/dev/null
    "$FLAGPOLE" env create plain --tenant "$app" --db "$db" >/dev/null
    for env in "$ENVIRONMENT" plain; do
        "$FLAGPOLE" import "$WORK/ruled.json" --tenant "$app" --env "$env" --db "$db" >/dev/null 2>&1
    done
    seq 0 999 | sed 's/^/beta-/' >"$WORK/beta-testers.txt"
    "$FLAGPOLE" segment set beta-testers --users-file "$WORK/beta-testers.txt" --tenant "$app" --db "$db" >/dev/null
    editor=$("$FLAGPOLE" key create --tenant "$app" --role editor --db "$db" | grep -o 'fp_[0-9a-f]\{48\}' | head -1)
    log "Starting flagpole serve"
    start_flagpole "$db" "$WORK/rules-eval.log" "${UNLIMITED[@]}"
    python3 "$HELPERS/targeting.py" put-rules "$SERVE_URL" "$editor" "/api/v1/tenants/$app/environments/$ENVIRONMENT" "$tests"
    for env in "$ENVIRONMENT" plain; do
        python3 "$HELPERS/targeting.py" record "$SERVE_URL" "/t/$app/$env/ofrep/v1/evaluate/flags" "$users" user- "$members"
    done
    run_wrk rules-eval-plain "$SERVE_URL" "$HELPERS/ofrep_attributes.lua" "/t/$app/plain/ofrep/v1/evaluate/flags" \
        "$users" user- "$members"
    p99_without=$WRK_P99_MS
    local rate_without=$WRK_RATE
    run_wrk rules-eval "$SERVE_URL" "$HELPERS/ofrep_attributes.lua" "/t/$app/$ENVIRONMENT/ofrep/v1/evaluate/flags" \
        "$users" user- "$members"
    p99=$WRK_P99_MS
    stop_server "$SERVE_PID" || failed ERRORS "rules-eval: flagpole serve exited with status $? on SIGTERM"
    [ "$(sql_value "$db" "SELECT count(*) FROM assignments WHERE rule = 'germany-new'")" -gt 0 ] \
        || failed "NO RULE" "rules-eval: no recorded group was decided by the rules"
    report_limit_row "one user against $(thousands "$tests") tests × 5 rules (OFREP bulk)" \
        "p99 $(awk -v v="$p99" 'BEGIN { printf "%.0f", v * 1000 }') µs, $(thousands "${WRK_RATE%.*}") users/s" \
        "p99 $(awk -v v="$p99_without" 'BEGIN { printf "%.0f", v * 1000 }') µs, $(thousands "${rate_without%.*}") users/s without rules" \
        "$(awk -v a="$p99" -v b="$p99_without" 'BEGIN { print a / b }')" '<=' 2 "p99 ≤ 2× without rules"
    server_log_note rules-eval "$WORK/rules-eval.log"
    NOTES+=("rules-eval: $(thousands "$tests") A/B tests in two environments of one server; one gets bench.d/targeting.py's five rules on every test (through the admin API, a revision each). $users users recorded in both through OFREP with the attributes sent ($members). wrk (bench.d/ofrep_attributes.lua) asks the bulk evaluation of every flag for them in turn: the latency of one user's evaluation of every test, each through its five rules (the fifth deciding), rendered as OFREP JSON, beside the environment without rules.")
}
