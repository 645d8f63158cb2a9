# Scripts/bench's "serve-user" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

# Users' own documents (?user=ID) of a realistic app file, recorded and new, and new users of the
# generated file, each rate measured by wrk beside the shared document's 200 in the same run.
bench_serve_user() {
    local db="$WORK/serve-user.sqlite" app=app path url code shared recorded new big tests users recorded_rows first peak
    fresh_copy "$db" "$WORK/imported.sqlite"
    python3 "$HELPERS/realistic_app.py" "$ROOT/Tests/Fixtures/real" >"$WORK/app.json"
    "$FLAGPOLE" tenant create "$app" --db "$db" >/dev/null
    "$FLAGPOLE" import "$WORK/app.json" --tenant "$app" --db "$db" >/dev/null 2>&1
    tests=$(python3 -c 'import json, sys; print(sum(len(f.get("test-variations") or []) >= 2 for f in json.load(open(sys.argv[1]))["features"]))' "$WORK/app.json")
    # Typed configs beside the features, one of each type, the string following the first test.
    python3 - "$WORK/app.json" >"$WORK/app-configs.json" <<'PYTHON'
import json, sys
test = next(f for f in json.load(open(sys.argv[1]))["features"] if len(f.get("test-variations") or []) >= 2)
values = {variation: f"title {index}" for index, variation in enumerate(test["test-variations"])}
print(json.dumps({"configs": [
    {"name": "mainViewTitle", "type": "string", "default": "Welcome", "follows": test["name"], "values": values},
    {"name": "numberOfItems", "type": "int", "default": 15},
    {"name": "discountRate", "type": "double", "default": 2.0},
    {"name": "someFeatureEnabled", "type": "bool", "default": True},
    {"name": "theme", "type": "json", "default": {"accent": "blue"}},
]}))
PYTHON
    "$FLAGPOLE" config import "$WORK/app-configs.json" --tenant "$app" --db "$db" >/dev/null
    log "Starting flagpole serve"
    start_flagpole "$db" "$WORK/serve-user.log" "${UNLIMITED[@]}"
    path="/t/$app/$ENVIRONMENT/features.json"
    # The recorded users, recorded through the server as apps would be (curl's URL globbing).
    curl -sS -o /dev/null "$SERVE_URL$path?user=known-[0-$((KNOWN_USERS - 1))]"
    users=$(sql_value "$db" "SELECT count(DISTINCT user_id) FROM assignments WHERE user_id GLOB 'known-*'")
    [ "$users" = "$KNOWN_USERS" ] || die "serve-user: $users of $KNOWN_USERS users recorded before the run"
    # A recorded user's document is the CLI's, byte for byte (and reading it writes nothing).
    code=$(curl -sS -o "$WORK/serve-user-check.json" -w '%{http_code}' "$SERVE_URL$path?user=known-7")
    [ "$code" = 200 ] || die "GET $path?user=known-7 answered $code"
    "$FLAGPOLE" export --tenant "$app" --user known-7 --db "$db" >"$WORK/serve-user-cli.json"
    cmp -s "$WORK/serve-user-check.json" "$WORK/serve-user-cli.json" \
        || failed "BYTES DIFFER" "serve-user: the server's and \`flagpole export --user\`'s documents of known-7 differ"

    run_wrk serve-user-shared "$SERVE_URL$path"
    shared=$WRK_RATE
    local shared_p99=$WRK_P99_MS
    run_wrk serve-user-recorded "$SERVE_URL" "$HELPERS/user_known.lua" "$path" "$KNOWN_USERS"
    recorded=$WRK_RATE
    report_rate_row "serve GET ?user=ID, recorded users ($tests tests of 12 features)" requests "$recorded" "$shared" 0.5 \
        "p99 $WRK_P99_MS ms" "p99 $shared_p99 ms: the shared document of the same file (200)"

    # The same users' configs dictionaries, and their flags over OFREP.
    local configs_path="/t/$app/$ENVIRONMENT/configs.json" ofrep="/t/$app/$ENVIRONMENT/ofrep/v1/evaluate/flags" user etag
    code=$(curl -sS -o "$WORK/serve-user-configs.json" -w '%{http_code}' "$SERVE_URL$configs_path?user=known-7")
    [ "$code" = 200 ] && grep -q '"discountRate": 2.0' "$WORK/serve-user-configs.json" \
        || die "GET $configs_path?user=known-7 answered $code: $(head -c 300 "$WORK/serve-user-configs.json")"
    run_wrk serve-user-configs "$SERVE_URL" "$HELPERS/user_known.lua" "$configs_path" "$KNOWN_USERS"
    report_rate_row "serve GET configs.json?user=ID, recorded users (5 configs)" requests "$WRK_RATE" "$shared" 0.5 \
        "p99 $WRK_P99_MS ms; $(awk -v c="$WRK_RATE" -v f="$recorded" 'BEGIN { printf "%.2f", c / f }')× features.json?user=" \
        "p99 $shared_p99 ms: the shared features.json (200)"
    code=$(curl -sS -o "$WORK/serve-user-ofrep.json" -w '%{http_code}' -H 'Content-Type: application/json' \
        --data '{"context": {"targetingKey": "known-7"}}' "$SERVE_URL$ofrep/mainViewTitle")
    [ "$code" = 200 ] || die "POST $ofrep/mainViewTitle answered $code: $(cat "$WORK/serve-user-ofrep.json")"
    run_wrk serve-user-ofrep "$SERVE_URL" "$HELPERS/ofrep.lua" "$ofrep/mainViewTitle" "$KNOWN_USERS"
    report_rate_row "OFREP single evaluation, recorded users (a config following a test)" requests "$WRK_RATE" "$shared" 0.5 \
        "p99 $WRK_P99_MS ms" "p99 $shared_p99 ms: the shared features.json (200)"
    # Each recorded user's bulk ETag, fetched once; then the 304 path under load.
    : >"$WORK/ofrep-etags.txt"
    for user in $(seq 0 $((KNOWN_USERS - 1))); do
        etag=$(curl -sS -D - -o /dev/null -H 'Content-Type: application/json' \
            --data "{\"context\": {\"targetingKey\": \"known-$user\"}}" "$SERVE_URL$ofrep" | sed -n 's/^etag: *//Ip' | tr -d '\r')
        [ -n "$etag" ] || die "the bulk evaluation of known-$user has no ETag"
        echo "known-$user $etag" >>"$WORK/ofrep-etags.txt"
    done
    code=$(curl -sS -o /dev/null -w '%{http_code}' -H "If-None-Match: $(sed -n '8s/^[^ ]* //p' "$WORK/ofrep-etags.txt")" \
        --data '{"context": {"targetingKey": "known-7"}}' "$SERVE_URL$ofrep")
    [ "$code" = 304 ] || die "the bulk evaluation of known-7 with its ETag answered $code, not 304"
    run_wrk serve-user-ofrep-bulk-304 "$SERVE_URL" "$HELPERS/ofrep.lua" "$ofrep" "$KNOWN_USERS" "$WORK/ofrep-etags.txt"
    if [ "$WRK_BYTES" -gt 1024 ]; then
        failed ERRORS "serve-user: wrk read $WRK_BYTES bytes per bulk answer: not 304s"
    fi
    report_rate_row "OFREP bulk evaluation 304 (If-None-Match), recorded users" requests "$WRK_RATE" "$recorded" 1.0 \
        "p99 $WRK_P99_MS ms" "features.json?user= of the same users"

    run_wrk serve-user-new "$SERVE_URL" "$HELPERS/user_new.lua" "$path" new
    new=$WRK_RATE
    local new_requests=$WRK_REQUESTS new_p99=$WRK_P99_MS new_seconds=$WRK_SECONDS
    # Each new user of the generated file is a row in each of its thousands of tests: seconds an answer.
    WRK_TIMEOUT=60s run_wrk serve-user-new-big "$SERVE_URL" "$HELPERS/user_new.lua" "/t/$TENANT/$ENVIRONMENT/features.json" big
    big=$WRK_RATE
    running "$SERVE_PID" || die "flagpole serve died under load: $(tail -5 "$WORK/serve-user.log")"
    peak=$(peak_rss_mib "$SERVE_PID")
    stop_server "$SERVE_PID" || failed ERRORS "serve-user: flagpole serve exited with status $? on SIGTERM"
    # Every answered new user is in every test, each assignment with its 'first' event.
    users=$(sql_value "$db" "SELECT count(DISTINCT user_id) FROM assignments WHERE user_id GLOB 'new-*'")
    recorded_rows=$(sql_value "$db" "SELECT count(*) FROM assignments WHERE user_id GLOB 'new-*'")
    first=$(sql_value "$db" "SELECT count(*) FROM assignment_events WHERE reason = 'first' AND user_id GLOB 'new-*'")
    if [ "$users" -lt "$new_requests" ] || [ "$recorded_rows" -ne $((users * tests)) ] || [ "$first" -ne "$recorded_rows" ]; then
        failed ERRORS "serve-user: wrk got $(thousands "$new_requests") documents of new users; the database holds $(thousands "$users") of them in $(thousands "$recorded_rows") assignments ($tests tests each) with $(thousands "$first") 'first' events"
    fi
    report_limit_row "serve GET ?user=ID, new users ($tests tests of 12 features: $tests assignments and events each)" \
        "$(thousands "${new%.*}") users/s (p99 $new_p99 ms); peak RSS $peak MiB" "–" "${new%.*}" '>=' 10000 "≥ 10 000 users/s"
    report_limit_row "serve GET ?user=ID, new users of the $(thousands "$FEATURES")-feature file" \
        "$(thousands "${big%.*}") users/s (p99 $WRK_P99_MS ms)" "–" "${big%.*}" '>=' 0 "reported"
    server_log_note serve-user "$WORK/serve-user.log"
    NOTES+=("serve-user: \`flagpole serve ${UNLIMITED[*]}\` (wrk is one client) on a copy of the import row's database plus bench.d/realistic_app.py's file (the features of two real apps, 12, $tests of them tests). $(thousands "$KNOWN_USERS") users recorded first through the server; one's document checked equal to \`flagpole export --user\`. wrk (1 thread, $HTTP_CONNECTIONS connections, $HTTP_SECONDS s): the shared document (the baseline), then bench.d/user_known.lua cycling through the recorded users, then bench.d/user_new.lua with a new user each request ($(thousands "$users") users in $(thousands "$recorded_rows") assignments, each with its 'first' event, counted afterwards), then new users of the generated file. Without Accept-Encoding, as the shared rows. The configs and OFREP rows: five configs (one of each type, the string following the first test) imported beside the file; configs.json?user= cycling through the recorded users (bench.d/user_known.lua); OFREP single evaluations of the string config for them (bench.d/ofrep.lua); and bulk evaluations with each user's ETag, fetched once before the run, as If-None-Match (304s), compared with the same users' features.json?user=.")
    bucketeer_rows "$app" "$db"
}

# The Bucketeer SDK's calls on serve-user's server and users, each interleaved with its OFREP or
# Flagpole counterpart (ROUNDS rounds): polls with each user's current token against OFREP bulk
# 304s, full answers against OFREP bulk 200s, and register_events batches of 50 goal events with
# fresh ids against POST …/events batches of 50.
bucketeer_rows() {
    local app=$1 db=$2 code key before after accepted
    local ofrep="/t/$app/$ENVIRONMENT/ofrep/v1/evaluate/flags" bucketeer="/t/$app/$ENVIRONMENT/get_evaluations"
    # The events need a delivery key and a goal (the CLI writes them before the server starts).
    key=$("$FLAGPOLE" key create --tenant "$app" --role delivery --db "$db" | grep -o 'fp_[0-9a-f]\{48\}' | head -1)
    "$FLAGPOLE" goal create purchase --kind conversion --tenant "$app" --db "$db" >/dev/null
    start_flagpole "$db" "$WORK/bucketeer-serve.log" "${UNLIMITED[@]}"
    # Each recorded user's token, fetched once: the poll of an app that holds its answer.
    python3 - "$SERVE_URL$bucketeer" "$KNOWN_USERS" >"$WORK/bucketeer-tokens.txt" <<'PYTHON' || die "bucketeer: no tokens"
import json, sys, urllib.request
url, count = sys.argv[1], int(sys.argv[2])
for index in range(count):
    user = f"known-{index}"
    body = json.dumps({"tag": "", "user": {"id": user, "data": {}}, "userEvaluationsId": ""}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json", "Authorization": "any"})
    answer = json.load(urllib.request.urlopen(request))
    assert len(answer["evaluations"]["evaluations"]) == 17, answer
    print(user, answer["userEvaluationsId"])
PYTHON
    code=$(curl -sS -o "$WORK/bucketeer-poll.json" -w '%{http_code}' -H 'Authorization: any' --data \
        "{\"user\": {\"id\": \"known-7\", \"data\": {}}, \"userEvaluationsId\": \"$(sed -n '8s/^[^ ]* //p' "$WORK/bucketeer-tokens.txt")\"}" \
        "$SERVE_URL$bucketeer")
    [ "$code" = 200 ] && grep -q '"evaluations":\[\]' "$WORK/bucketeer-poll.json" \
        || die "a poll of known-7 with its token answered $code: $(head -c 300 "$WORK/bucketeer-poll.json")"
    # shellcheck disable=SC2034 # read by interleaved_wrk through namerefs
    local ofrep_304=("$SERVE_URL" "$HELPERS/ofrep.lua" "$ofrep" "$KNOWN_USERS" "$WORK/ofrep-etags.txt")
    local polls=("$SERVE_URL" "$HELPERS/bucketeer.lua" "$bucketeer" "$KNOWN_USERS" any "$WORK/bucketeer-tokens.txt")
    interleaved_wrk bucketeer-poll ofrep_304 polls
    report_rate_row "Bucketeer get_evaluations, the current token (nothing sent), recorded users" requests \
        "$OURS_RATE" "$BASE_RATE" 0.9 "min–max $OURS_SPREAD" "min–max $BASE_SPREAD: OFREP bulk 304 of the same users"
    local ofrep_200=("$SERVE_URL" "$HELPERS/ofrep.lua" "$ofrep" "$KNOWN_USERS")
    local full=("$SERVE_URL" "$HELPERS/bucketeer.lua" "$bucketeer" "$KNOWN_USERS" any)
    interleaved_wrk bucketeer-full ofrep_200 full
    report_rate_row "Bucketeer get_evaluations, every flag (17), recorded users" requests \
        "$OURS_RATE" "$BASE_RATE" 0.8 "min–max $OURS_SPREAD" "min–max $BASE_SPREAD: OFREP bulk 200 of the same users"

    before=$(sql_value "$db" "SELECT count(*) FROM events")
    local own=("$SERVE_URL" "$HELPERS/event_batches.lua" "/t/$app/$ENVIRONMENT/events" "$KNOWN_USERS" "$key" flagpole)
    local sdk=("$SERVE_URL" "$HELPERS/event_batches.lua" "/t/$app/$ENVIRONMENT/register_events" "$KNOWN_USERS" "$key" bucketeer)
    interleaved_wrk bucketeer-events own sdk
    report_rate_row "Bucketeer register_events, 50 goal events a request, fresh ids" events \
        "$(awk -v r="$OURS_RATE" 'BEGIN { printf "%.0f", r * 50 }')" "$(awk -v r="$BASE_RATE" 'BEGIN { printf "%.0f", r * 50 }')" 0.8 \
        "min–max $OURS_SPREAD requests/s" "min–max $BASE_SPREAD requests/s: POST …/events, 50 a batch"
    stop_server "$SERVE_PID" || failed ERRORS "bucketeer: flagpole serve exited with status $? on SIGTERM"
    after=$(sql_value "$db" "SELECT count(*) FROM events")
    accepted=$((after - before))
    [ "$accepted" -gt 0 ] || failed "EVENTS LOST" "bucketeer: no event was kept"
    NOTES+=("bucketeer: on serve-user's server and its $(thousands "$KNOWN_USERS") recorded users (5 configs beside 12 features: 17 flags). Polls (bench.d/bucketeer.lua) present each user's current userEvaluationsId, fetched once before the run, with \`\"data\": {}\`, against OFREP bulk evaluations with each user's ETag (304); full answers present none, against OFREP bulk 200s. Each pair runs interleaved, $ROUNDS rounds of $HTTP_SECONDS s, the median reported with min–max. Events (bench.d/event_batches.lua): 50 conversions of goal \"purchase\" a request, fresh ids, by the recorded users (each in 6 tests), in the SDK's envelope against Flagpole's own; $(thousands "$accepted") raw events kept in all.")
}
