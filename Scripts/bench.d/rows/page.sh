# Scripts/bench's "page" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

# The dashboard's page of one test of the history database: signed in with an admin key, timed
# end to end with curl.
bench_page() {
    local db="$WORK/history.sqlite" key page code times median worst events users
    key=$("$FLAGPOLE" key create --tenant "$TENANT" --role admin --name bench --db "$db" 2>/dev/null)
    log "Starting flagpole serve on the history database"
    start_flagpole "$db" "$WORK/page.log"
    # Sign in as a browser does: the form's CSRF token, then the key.
    curl -sS -c "$WORK/page.cookies" -b "$WORK/page.cookies" -o "$WORK/page-login.html" "$SERVE_URL/login"
    local csrf
    csrf=$(sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p;T;q' "$WORK/page-login.html")
    code=$(curl -sS -c "$WORK/page.cookies" -b "$WORK/page.cookies" -o /dev/null -w '%{http_code}' \
        --data-urlencode "csrf=$csrf" --data-urlencode "key=$key" --data-urlencode "next=/" "$SERVE_URL/login")
    [ "$code" = 303 ] || die "page: signing in answered $code"
    page="$SERVE_URL/tenants/$TENANT/$ENVIRONMENT/features/$TEST"
    times=()
    local run
    for run in $(seq 0 "$PAGE_RUNS"); do
        code=$(curl -sS -b "$WORK/page.cookies" -o "$WORK/page.html" -w '%{http_code} %{time_total}' "$page")
        [ "${code% *}" = 200 ] || die "page: GET $page answered ${code% *}"
        [ "$run" = 0 ] || times+=("${code#* }")
    done
    grep -q "<svg" "$WORK/page.html" || failed ERRORS "page: the feature page has no distribution chart"
    read -r median worst < <(printf '%s\n' "${times[@]}" | sort -n | awk '{ t[NR] = $1 * 1000 } END { printf "%.0f %.0f\n", t[int((NR + 1) / 2)], t[NR] }')
    stop_server "$SERVE_PID" || failed ERRORS "page: flagpole serve exited with status $? on SIGTERM"
    events=$(sql_value "$db" "SELECT count(*) FROM assignment_events WHERE feature_id = $(sql_value "$db" "SELECT id FROM features WHERE name = '$TEST'")")
    users=$(sql_value "$db" "SELECT sum(users) FROM assignment_deltas WHERE feature_id = (SELECT id FROM features WHERE name = '$TEST')")
    report_limit_row "dashboard feature page of a test with $(thousands "$users") users and $(thousands "$events") of the $(thousands "$EVENTS") events" \
        "median $median ms, worst $worst ms" "–" "$median" '<=' 250 "≤ 250 ms"
    NOTES+=("page: GET /tenants/$TENANT/$ENVIRONMENT/features/$TEST of \`flagpole serve\` on the history database, signed in with an admin key through the sign-in form; curl's time_total over $PAGE_RUNS loads after one warm-up: the plan of its biases, its users per variation now and at 12 moments (from the assignment deltas), and its 20 latest events.")
}
