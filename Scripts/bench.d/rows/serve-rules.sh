# Scripts/bench's "serve-rules" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

# OFREP single evaluations of a test with five rules, the last deciding, beside the same test
# without rules: followers of rules whose attributes are kept, so every request is a read.
bench_serve_rules() {
    local db="$WORK/serve-rules.sqlite" app=rules test first last ofrep members without names code
    members='"country": "DE", "appVersion": "5.2.1"'
    python3 "$HELPERS/realistic_app.py" "$ROOT/Tests/Fixtures/real" >"$WORK/app.json"
    "$FLAGPOLE" tenant create "$app" --db "$db" >/dev/null
    "$FLAGPOLE" import "$WORK/app.json" --tenant "$app" --db "$db" >/dev/null 2>&1
    # The file's first test, its first and last variations: one a line.
    mapfile -t names < <(python3 -c 'import json, sys
test = next(f for f in json.load(open(sys.argv[1]))["features"] if len(f.get("test-variations") or []) >= 2)
print(test["name"], test["test-variations"][0], test["test-variations"][-1], sep="\n")' "$WORK/app.json")
    test=${names[0]} first=${names[1]} last=${names[2]}
    seq 0 999 | sed 's/^/beta-/' >"$WORK/beta-testers.txt"
    "$FLAGPOLE" segment set beta-testers --users-file "$WORK/beta-testers.txt" --tenant "$app" --db "$db" >/dev/null
    python3 "$HELPERS/targeting.py" rules "$first" "$last" >"$WORK/serve-rules.json"
    log "Starting flagpole serve"
    start_flagpole "$db" "$WORK/serve-rules.log" "${UNLIMITED[@]}"
    ofrep="/t/$app/$ENVIRONMENT/ofrep/v1/evaluate/flags"
    python3 "$HELPERS/targeting.py" record "$SERVE_URL" "$ofrep" "$KNOWN_USERS" follower- "$members"
    local key
    key=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$test")
    run_wrk serve-rules-without "$SERVE_URL" "$HELPERS/ofrep_attributes.lua" "$ofrep/$key" "$KNOWN_USERS" follower- "$members"
    without=$WRK_RATE
    local without_p99=$WRK_P99_MS
    "$FLAGPOLE" rule set "$test" --file "$WORK/serve-rules.json" --tenant "$app" --db "$db" >/dev/null
    code=$(curl -sS -o "$WORK/serve-rules-check.json" -w '%{http_code}' -H 'Content-Type: application/json' \
        --data "{\"context\": {\"targetingKey\": \"follower-7\", $members}}" "$SERVE_URL$ofrep/$key")
    [ "$code" = 200 ] && grep -q '"rule":"germany-new"' "$WORK/serve-rules-check.json" \
        || die "serve-rules: the rule did not decide follower-7's group: $code $(cat "$WORK/serve-rules-check.json")"
    run_wrk serve-rules-with "$SERVE_URL" "$HELPERS/ofrep_attributes.lua" "$ofrep/$key" "$KNOWN_USERS" follower- "$members"
    stop_server "$SERVE_PID" || failed ERRORS "serve-rules: flagpole serve exited with status $? on SIGTERM"
    report_rate_row "OFREP single evaluation, a test with 5 rules (the 5th deciding)" requests "$WRK_RATE" "$without" 0.8 \
        "p99 $WRK_P99_MS ms" "p99 $without_p99 ms: the same test without rules"
    server_log_note serve-rules "$WORK/serve-rules.log"
    NOTES+=("serve-rules: \`flagpole serve ${UNLIMITED[*]}\` on bench.d/realistic_app.py's file; $(thousands "$KNOWN_USERS") users recorded first through OFREP with the attributes the run sends ($members), so each evaluation is a read. wrk (bench.d/ofrep_attributes.lua) evaluates \"$test\" for them in turn, before and after \`flagpole rule set\` gives it bench.d/targeting.py's five rules: a country, an app version, a 1 000-user segment and a targetingKey prefix that never match these users, then a country list and a version that do, serving a 20/80 split.")
}
