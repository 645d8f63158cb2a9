# Scripts/bench's "serve-pg" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

# flagpole copy of the history database (USERS recorded users, EVENTS assignment events) to a
# throwaway PostgreSQL server and back, each beside the database tools moving the same tables
# without checking them: sqlite3's CSV into psql's COPY, and psql's COPY out into sqlite3's .import.
# wrk_rate OUTPUT: requests/s in a wrk output file.
wrk_rate() {
    awk '/^Requests\/sec:/ { print $2 }' "$1"
}

# New users recorded through `flagpole serve` on PostgreSQL, one instance and two, beside pgbench
# running the same statements per user over as many connections, and one instance on SQLite; then
# how long a write on one instance takes to reach the other's ETag.
bench_serve_pg() {
    local server dir url key route path ids tenant_id environment_id feature_id recorded sqlite_db
    local one one_p99 two pgbench pgbench_user tests_per_user test_id sqlite new_one propagation half=$((HTTP_CONNECTIONS / 2))
    server=$("$ROOT/Scripts/postgres" start --owner-pid $$) || die "serve-pg: Scripts/postgres could not start a server"
    url=$(sed -n 1p <<<"$server")
    dir=$(sed -n 2p <<<"$server")
    "$FLAGPOLE" copy --from "$WORK/tests.sqlite" --to "$url" >/dev/null || die "serve-pg: the copy to PostgreSQL failed"
    key=$("$FLAGPOLE" key create --tenant "$TENANT" --role editor --name bench --db "$url" 2>/dev/null)
    route="/api/v1/tenants/$TENANT/environments/$ENVIRONMENT/features/$TEST/assignments"
    path="/t/$TENANT/$ENVIRONMENT/features.json"

    # The baseline: what recording a new user in a test writes (the assignment, its 'first' event,
    # the minute's count of its variation), one user a transaction, over as many connections.
    ids=$(psql -At -d "$url" -c "SELECT tenant_id, environment_id, id FROM features WHERE name = '$TEST'")
    IFS='|' read -r tenant_id environment_id feature_id <<<"$ids"
    cat >"$WORK/pgbench-assign.sql" <<SQL
\set n random(1, 2000000000)
\set point random(0, 99999)
BEGIN;
INSERT INTO assignments (tenant_id, environment_id, feature_id, user_id, point, variation, revision, assigned_at, rule, pinned, app_point)
    VALUES ($tenant_id, $environment_id, $feature_id, 'pgbench-' || :client_id || '-' || :n, :point / 1000.0, 'A', 1, 1764000000000, NULL, TRUE, NULL)
    ON CONFLICT (feature_id, point, user_id) DO NOTHING;
INSERT INTO assignment_events (tenant_id, environment_id, feature_id, user_id, previous_variation, variation, point, revision, reason, created_at, rule)
    VALUES ($tenant_id, $environment_id, $feature_id, 'pgbench-' || :client_id || '-' || :n, NULL, 'A', :point / 1000.0, 1, 'first', 1764000000000, NULL);
INSERT INTO assignment_deltas (tenant_id, environment_id, feature_id, minute, variation, users)
    VALUES ($tenant_id, $environment_id, $feature_id, 29400000, 'A', 1)
    ON CONFLICT (feature_id, minute, variation) DO UPDATE SET users = assignment_deltas.users + excluded.users;
COMMIT;
SQL
    # The baseline of an app's first fetch: the same three statements for each test of the document.
    {
        echo '\set n random(1, 2000000000)'
        echo '\set point random(0, 99999)'
        echo 'BEGIN;'
        for test_id in $(psql -At -d "$url" -c "SELECT f.id FROM features f WHERE f.environment_id = $environment_id AND EXISTS (SELECT 1 FROM variations v WHERE v.feature_id = f.id) ORDER BY f.position"); do
            sed -n '/^INSERT/,/;$/p' "$WORK/pgbench-assign.sql" | sed "s/$feature_id, 'pgbench-'/$test_id, 'pgbench-'/; s/($tenant_id, $environment_id, $feature_id, 29400000/($tenant_id, $environment_id, $test_id, 29400000/"
        done
        echo 'COMMIT;'
    } >"$WORK/pgbench-user.sql"
    tests_per_user=$(grep -c '^INSERT INTO assignments ' "$WORK/pgbench-user.sql")
    log "pgbench: $HTTP_CONNECTIONS connections for $HTTP_SECONDS s"
    pgbench -n -c "$HTTP_CONNECTIONS" -j 1 -T "$HTTP_SECONDS" -f "$WORK/pgbench-assign.sql" "$url" >"$OUT/serve-pg-pgbench.txt" 2>&1 \
        || die "pgbench failed: $(tail -3 "$OUT/serve-pg-pgbench.txt")"
    pgbench=$(awk '/^tps = / { print $3 }' "$OUT/serve-pg-pgbench.txt")
    pgbench -n -c "$HTTP_CONNECTIONS" -j 1 -T "$HTTP_SECONDS" -f "$WORK/pgbench-user.sql" "$url" >"$OUT/serve-pg-pgbench-user.txt" 2>&1 \
        || die "pgbench failed: $(tail -3 "$OUT/serve-pg-pgbench-user.txt")"
    pgbench_user=$(awk '/^tps = / { print $3 }' "$OUT/serve-pg-pgbench-user.txt")

    log "Starting two flagpole serve on PostgreSQL"
    start_flagpole "$url" "$WORK/serve-pg-a.log" "${UNLIMITED[@]}"
    local first_pid=$SERVE_PID first_url=$SERVE_URL
    start_flagpole "$url" "$WORK/serve-pg-b.log" "${UNLIMITED[@]}"
    local second_pid=$SERVE_PID second_url=$SERVE_URL
    run_wrk serve-pg-one "$first_url$route" "$HELPERS/assign.lua" "$key" 1 one
    one=$WRK_RATE one_p99=$WRK_P99_MS
    # Both at once, half the connections each: the second wrk in the background.
    wrk --threads 1 --connections "$half" --duration "${HTTP_SECONDS}s" --latency --script "$HELPERS/assign.lua" \
        "$second_url$route" -- "$key" 1 twob >"$OUT/serve-pg-two-b.txt" &
    local background=$!
    HTTP_CONNECTIONS=$half run_wrk serve-pg-two-a "$first_url$route" "$HELPERS/assign.lua" "$key" 1 twoa
    wait "$background" || failed ERRORS "serve-pg: the second wrk failed"
    two=$(awk -v a="$WRK_RATE" -v b="$(wrk_rate "$OUT/serve-pg-two-b.txt")" 'BEGIN { print a + b }')
    run_wrk serve-pg-user-one "$first_url" "$HELPERS/user_new.lua" "$path" usera
    new_one=$WRK_RATE
    propagation=$(python3 "$HELPERS/propagation.py" "$first_url" "$second_url" "$key" "$TENANT" "$ENVIRONMENT" "$TEST" 100) \
        || failed ERRORS "serve-pg: propagation: $propagation"
    head -1 <<<"$propagation" >"$OUT/serve-pg-propagation.txt"
    stop_server "$first_pid" || failed ERRORS "serve-pg: the first instance exited with status $? on SIGTERM"
    stop_server "$second_pid" || failed ERRORS "serve-pg: the second instance exited with status $? on SIGTERM"
    recorded=$(psql -At -d "$url" -c "SELECT count(*) FROM assignment_events WHERE reason = 'first' AND (user_id LIKE 'one-%' OR user_id LIKE 'two%')")
    local expected
    expected=$(awk -v f="$OUT/serve-pg-one.txt" -v a="$OUT/serve-pg-two-a.txt" -v b="$OUT/serve-pg-two-b.txt" 'BEGIN {
        while ((getline line < f) > 0) if (line ~ / requests in /) { split(line, w, " "); n += w[1] }
        while ((getline line < a) > 0) if (line ~ / requests in /) { split(line, w, " "); n += w[1] }
        while ((getline line < b) > 0) if (line ~ / requests in /) { split(line, w, " "); n += w[1] }
        print n }')
    [ "$recorded" -ge "$expected" ] || failed ERRORS "serve-pg: wrk got $expected answers, the database holds $recorded 'first' events of their users"
    "$ROOT/Scripts/postgres" stop "$dir"

    # One instance on SQLite, the same load.
    sqlite_db="$WORK/serve-pg.sqlite"
    fresh_copy "$sqlite_db" "$WORK/tests.sqlite"
    key=$("$FLAGPOLE" key create --tenant "$TENANT" --role editor --name bench --db "$sqlite_db" 2>/dev/null)
    start_flagpole "$sqlite_db" "$WORK/serve-pg-sqlite.log" "${UNLIMITED[@]}"
    run_wrk serve-pg-sqlite "$SERVE_URL$route" "$HELPERS/assign.lua" "$key" 1 sqlite
    sqlite=$WRK_RATE
    stop_server "$SERVE_PID" || true

    report_rate_row "serve-pg POST, 1 new user a request, 1 instance on PostgreSQL" users "$one" "$pgbench" 0.5 \
        "p99 $one_p99 ms" "pgbench, the same 3 statements a user, $HTTP_CONNECTIONS connections"
    report_rate_row "serve-pg POST, 2 instances at once" users "$two" "$pgbench" 0.5 "report only (2 cores)" "pgbench"
    report_rate_row "serve-pg POST, 1 instance on SQLite" users "$sqlite" "$pgbench" 0.5 "" "pgbench"
    report_rate_row "serve-pg features.json?user= new users, 1 instance on PostgreSQL" users "$new_one" "$pgbench_user" 0.5 \
        "$tests_per_user tests a user" "pgbench, the same 3 statements for each of the $tests_per_user tests a user"
    add_row "serve-pg a write on one instance to the new ETag on the other" \
        "p50 $(cut -d' ' -f1 "$OUT/serve-pg-propagation.txt") ms, p99 $(cut -d' ' -f2 "$OUT/serve-pg-propagation.txt") ms" "–" "–" "≤ 1 000 ms" \
        "$(awk '{ print ($2 <= 1000 ? "PASS" : "MISS") }' "$OUT/serve-pg-propagation.txt")"
    NOTES+=("serve-pg: the database of tests copied into a throwaway PostgreSQL $(psql --version | awk '{ print $3 }') on loopback (Scripts/postgres: fsync off). pgbench (bench.d, written by this row) runs what recording a new user in a test writes, one user a transaction, $HTTP_CONNECTIONS connections for $HTTP_SECONDS s; for features.json?user=, the same for each of the document's $tests_per_user tests, one user a transaction. Two \`flagpole serve ${UNLIMITED[*]}\` on it: wrk (bench.d/assign.lua, one new user a POST) on the first with $HTTP_CONNECTIONS connections, then on both at once with $half each (summed); $(thousands "$recorded") 'first' events counted afterwards. features.json?user= with a new user each request (bench.d/user_new.lua) on the first. bench.d/propagation.py disables and enables $TEST through the first 100 times, timing each until the second serves the new ETag. Then one instance on a SQLite copy of the same database, the same POSTs.")
}
