# Scripts/bench's "guards" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

# The guard sweep: `flagpole tick` looking at GUARD_ENVS × 10 guarded ramps, every one holding
# its first step and due a look (what `serve` does every 5 minutes), each environment with
# GUARD_USERS users placed since the step and their events. Beside it, in the same run, the
# sqlite3 shell reading the rows the sweep judges from (every ramp, and its test's arms and
# totals): the floor of reading them at all. Target: ≤ 2 s for 1 000 ramps in 100 environments.
GUARD_ENVS=${FLAGPOLE_BENCH_GUARD_ENVS:-100}
GUARD_USERS=${FLAGPOLE_BENCH_GUARD_USERS:-1000}

bench_guards() {
    local source="$WORK/guarded.sqlite" copy="$WORK/guard-sweep.sqlite" clock="$WORK/guard-clock"
    local document="$WORK/guarded-features.json" users="$WORK/guard-users.txt" events="$WORK/guard-events.ndjson"
    local env index ramps looked now
    # One line: hyperfine's shell takes no $'…' quoting.
    local read_rows="SELECT r.*, a.*, t.* FROM ramps r LEFT JOIN experiment_arms a ON a.feature_id = r.feature_id LEFT JOIN experiment_totals t ON t.feature_id = r.feature_id AND t.variation = a.variation WHERE r.state = 'running'"
    log "Making $GUARD_ENVS environments of 10 guarded ramps each"
    python3 - "$document" <<'PY'
import json, sys
features = [{"name": f"test-{i}", "test-variations": ["Enabled", "Disabled"], "test-biases": [0, 100]} for i in range(10)]
json.dump({"features": features}, open(sys.argv[1], "w"))
PY
    seq -f "guard-user-%.0f" 1 "$GUARD_USERS" >"$users"
    rm -f "$source"
    "$FLAGPOLE" tenant create guards --db "$source" >/dev/null
    for ((env = 0; env < GUARD_ENVS; env++)); do
        "$FLAGPOLE" env create "env-$env" --tenant guards --db "$source" >/dev/null
        "$FLAGPOLE" import "$document" --tenant guards --env "env-$env" --db "$source" >/dev/null 2>&1
        "$FLAGPOLE" goal create crashes --kind count --better lower --tenant guards --env "env-$env" \
            --db "$source" >/dev/null
        for ((index = 0; index < 10; index++)); do
            "$FLAGPOLE" ramp create "test-$index" --steps 10,50,100 --hold 24h --guard crashes:+0.2pt \
                --tenant guards --env "env-$env" --db "$source" >/dev/null
        done
        # Users placed since the step in the first test, and a crash for one in ten of them.
        "$FLAGPOLE" assign --feature test-0 --users-file "$users" --tenant guards --env "env-$env" \
            --db "$source" >/dev/null
        now=$(date +%s%3N)
        awk -v env="$env" -v now="$now" 'NR % 10 == 0 {
            printf "{\"id\": \"%s-%d\", \"user\": \"%s\", \"goal\": \"crashes\", \"time\": %d}\n", env, NR, $0, now
        }' "$users" >"$events"
        "$FLAGPOLE" events import "$events" --tenant guards --env "env-$env" --db "$source" >/dev/null
    done
    checkpoint "$source"
    ramps=$(sql_value "$source" "SELECT count(*) FROM ramps WHERE state = 'running' AND guards <> '[]'")
    # An hour after the first steps: every ramp holds, and none has been looked at.
    date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ >"$clock"
    time_pair guards "$(fresh_copy_command "$copy" "$source")" \
        "$(printf 'FLAGPOLE_CLOCK_FILE=%q %q tick --db %q > /dev/null' "$clock" "$FLAGPOLE" "$copy")" \
        "$(printf 'sqlite3 %q %q > /dev/null' "$source" "$read_rows")" "$BULK_RUNS" true
    looked=$(sql_value "$copy" "SELECT count(DISTINCT ramp_id) FROM ramp_looks")
    [ "$looked" = "$ramps" ] || failed guards "the sweep looked at $looked of $ramps ramps"
    report_limit_row "guard sweep of $(thousands "$ramps") holding ramps in $GUARD_ENVS environments by \`tick\`" \
        "$FLAGPOLE_MS ms" "$BASELINE_MS ms" "$FLAGPOLE_MS" "<=" 2000 "≤ 2 000 ms"
    NOTES+=("guards: \`flagpole tick\` on a fresh copy of a database of $(thousands "$ramps") ramps guarded by \`crashes:+0.2pt\`, each holding its first step and due a look, $GUARD_USERS users placed in one test per environment with a crash for one in ten; every ramp looked at ($looked looks recorded). Beside it the sqlite3 shell selecting every running ramp with its test's arms and totals: the floor of reading what the sweep reads. The target is absolute (the issue's ≤ 2 s for 1 000 ramps in 100 environments).")
}
