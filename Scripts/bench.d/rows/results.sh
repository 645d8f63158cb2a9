# Scripts/bench's "results" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

# Experiment results: USERS users in 10 running tests, EVENTS events sent through the API in
# batches of 1 000 beside the sqlite3 shell writing the same rows (raw events, one write of each
# user's row, the variations' totals); a readout over them, beside the shell scanning the raw
# events for the same sums; the database per million events before and after raw events expire.
bench_results() {
    local db="$WORK/results.sqlite" features="$WORK/results-features.json" users="$WORK/results-users.txt"
    local tests=10 delivery reader sent ms env_id goals test_ids sample baseline_db start end baseline_ms
    local url times=() readout_ms scan_ms before after i follow_ms events_bytes figures_bytes state_bytes
    [ $((USERS % 1000)) = 0 ] || die "results: FLAGPOLE_BENCH_USERS must be a multiple of 1 000"
    log "Recording $(thousands "$USERS") users in $tests tests"
    python3 "$HELPERS/results.py" features "$features" "$tests"
    "$FLAGPOLE" tenant create "$TENANT" --db "$db" >/dev/null
    "$FLAGPOLE" import "$features" --tenant "$TENANT" --db "$db" >/dev/null 2>&1
    "$FLAGPOLE" goal create purchase --kind conversion --tenant "$TENANT" --db "$db" >/dev/null
    "$FLAGPOLE" goal create revenue --kind value --tenant "$TENANT" --db "$db" >/dev/null
    python3 -c "import sys; sys.stdout.write(''.join(f'u{b:03d}{s:03d}\n' for b in range($USERS // 1000) for s in range(1000)))" >"$users"
    for i in $(seq 0 $((tests - 1))); do
        "$FLAGPOLE" assign --feature "results_test_$i" --users-file "$users" --tenant "$TENANT" --db "$db" >/dev/null
    done
    delivery=$("$FLAGPOLE" key create --tenant "$TENANT" --role delivery --db "$db" | grep -o 'fp_[0-9a-f]\{48\}' | head -1)
    reader=$("$FLAGPOLE" key create --tenant "$TENANT" --role reader --db "$db" | grep -o 'fp_[0-9a-f]\{48\}' | head -1)
    start_flagpole "$db" "$WORK/results-serve.log"
    url="$SERVE_URL/api/v1/tenants/$TENANT/environments/$ENVIRONMENT/features/results_test_0/results"
    # The figures follow assignments as they are recorded, batch by batch; here all of them were
    # recorded at once, so the first readout follows them all before events are timed.
    log "Following $(thousands "$((USERS * tests))") assignments"
    start=$(date +%s%N)
    curl -fsS -o /dev/null -H "Authorization: Bearer $reader" "$url" || failed "READOUT FAILED" "results: GET $url failed"
    end=$(date +%s%N)
    follow_ms=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.0f", (b - a) / 1e6 }')
    log "Sending $(thousands "$EVENTS") events in batches of 1 000"
    read -r sent ms < <(python3 "$HELPERS/results.py" send "$SERVE_URL" "$delivery" "$EVENTS" "$USERS")
    log "flagpole: $sent events accepted in $ms ms"
    [ "$sent" = "$EVENTS" ] || failed "EVENTS LOST" "results: $sent of $EVENTS events accepted"
    log "Reading the readout"
    curl -fsS -o /dev/null -H "Authorization: Bearer $reader" "$url" || failed "READOUT FAILED" "results: GET $url failed"
    for i in $(seq 1 "$PAGE_RUNS"); do
        times+=("$(curl -fsS -o /dev/null -w '%{time_total}' -H "Authorization: Bearer $reader" "$url")")
    done
    readout_ms=$(printf '%s\n' "${times[@]}" | sort -n | awk '{ t[NR] = $1 } END { printf "%.1f", t[int((NR + 1) / 2)] * 1000 }')
    stop_server "$SERVE_PID"
    checkpoint "$db"

    log "The shell writing the same rows"
    env_id=$(sql_value "$db" "SELECT id FROM environments WHERE name = '$ENVIRONMENT'")
    goals=$(sql_value "$db" "SELECT group_concat(id) FROM (SELECT id FROM goals ORDER BY name)")
    test_ids=$(sql_value "$db" "SELECT group_concat(id) FROM features WHERE name LIKE 'results_test_%'")
    sample=$((EVENTS < 200000 ? EVENTS : 200000))
    state_bytes=$(sql_value "$db" "SELECT CAST(avg(length(state)) AS INTEGER) FROM experiment_users")
    python3 "$HELPERS/results.py" baseline-sql "$WORK/results-baseline.sql" "$sample" "$USERS" "$env_id" "$goals" "$test_ids" "$state_bytes"
    baseline_db="$WORK/results-baseline.sqlite"
    cp "$db" "$baseline_db"
    start=$(date +%s%N)
    sqlite3 -bail "$baseline_db" <"$WORK/results-baseline.sql" >/dev/null
    end=$(date +%s%N)
    baseline_ms=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
    log "sqlite3: $sample events' rows in $baseline_ms ms"
    report_rate_row "event ingestion, batches of 1 000, every user in $tests tests ($(thousands "$EVENTS") events)" events \
        "$(awk -v n="$sent" -v m="$ms" 'BEGIN { printf "%.0f", n * 1000 / m }')" \
        "$(awk -v n="$sample" -v m="$baseline_ms" 'BEGIN { printf "%.0f", n * 1000 / m }')" 0.5
    report_limit_row "event ingestion: absolute" \
        "$(thousands "$(awk -v n="$sent" -v m="$ms" 'BEGIN { printf "%.0f", n * 1000 / m }')") events/s" "–" \
        "$(awk -v n="$sent" -v m="$ms" 'BEGIN { printf "%.0f", n * 1000 / m }')" ">=" 100000 "≥ 100 000 events/s"

    log "The shell scanning the raw events for one test's sums"
    start=$(date +%s%N)
    # Each user's sums per goal first, then their group in the test: the order that scans the
    # events once (assignments are keyed by feature, point and user, not by user).
    sqlite3 -bail "$db" "SELECT a.variation, e.goal_id, sum(e.events), count(*), total(e.value)
        FROM assignments a JOIN (SELECT user_id, goal_id, count(*) AS events, total(value) AS value
                                 FROM events GROUP BY user_id, goal_id) e ON e.user_id = a.user_id
        WHERE a.feature_id = ${test_ids%%,*} GROUP BY a.variation, e.goal_id" >/dev/null
    end=$(date +%s%N)
    scan_ms=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", (b - a) / 1e6 }')
    report_limit_row "readout of a test over $(thousands "$EVENTS") events and $(thousands "$USERS") users (median over HTTP)" \
        "$readout_ms ms" "$scan_ms ms (shell scanning the events)" "$readout_ms" "<=" 100 "≤ 100 ms"

    before=$(sql_value "$db" "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size")
    events_bytes=$(sql_value "$db" "SELECT sum(pgsize) FROM dbstat WHERE name = 'events'")
    figures_bytes=$(sql_value "$db" "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'experiment%' OR name LIKE 'sqlite_autoindex_experiment%'")
    sqlite3 -bail "$db" "UPDATE events SET received_at = received_at - 100 * 86400000"
    "$FLAGPOLE" events expire --db "$db" >/dev/null
    sqlite3 -bail "$db" "VACUUM"
    after=$(sql_value "$db" "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size")
    add_row "database: raw events per million; the results' own tables (after raw events expire: whole file)" \
        "$(awk -v e="$events_bytes" -v n="$EVENTS" 'BEGIN { printf "%.0f MB", e / n }') per million events; $(awk -v f="$figures_bytes" -v u="$USERS" 'BEGIN { printf "%.0f MB (%.0f bytes a user in '"$tests"' tests)", f / 1e6, f / u }') ($(awk -v b="$before" -v a="$after" 'BEGIN { printf "%.0f → %.0f MB", b / 1e6, a / 1e6 }'))" \
        "–" "–" "–" "–"
    NOTES+=("results: $tests A/B tests with every one of $(thousands "$USERS") users recorded in each, two goals (a conversion and a value); \`flagpole serve\` took $(thousands "$EVENTS") events from two connections in batches of 1 000 (each batch one transaction: raw events kept by id, each user's row read and written once, the variations' totals updated), accepted $(thousands "$sent"); the first readout before them followed the $(thousands "$((USERS * tests))") assignments recorded at once ($follow_ms ms, untimed: live, the figures follow assignments batch by batch). Baseline: the sqlite3 shell on a copy of the same database executing the same writes for $(thousands "$sample") events (one INSERT of the batch's events, one upsert of each user's row, of the $state_bytes bytes flagpole's rows average, the totals' upserts), without parsing JSON, reading users' rows or computing anything. The readout is GET …/features/results_test_0/results (two goals, epochs, history) with a reader key, the median of $PAGE_RUNS; beside it, the shell's one scan of the raw events joined to the test's assignments. Sizes from dbstat: the raw events table per million events, and the results' own tables (users' stints and totals, epochs, arms, totals, days); the whole file before and after raw events are expired (their receipt moved 100 days back, \`flagpole events expire\`, VACUUM), which the file keeps beside the assignments of $(thousands "$USERS") users in $tests tests.")
}
