# What several rows of Scripts/bench share: the tools, the release build, the work directory, the
# generated file and the databases the rows start from. Sourced by Scripts/bench.
# shellcheck shell=bash disable=SC2154

cleanup() {
    local pid
    # A server left behind would keep its port and the work directory's files open.
    for pid in "${SERVER_PIDS[@]}"; do stop_server "$pid" || true; done
    [ -n "$WORK" ] && [ -d "$WORK" ] || return 0
    if [ "${FLAGPOLE_BENCH_KEEP:-0}" = 1 ]; then
        printf 'bench: kept the work directory %s\n' "$WORK" >&2
    else
        rm -rf "$WORK"
    fi
}

install_tools() {
    log "Checking tools"
    # dpkg first, so that a machine that has everything never touches the network.
    local missing=() package packages=(hyperfine sqlite3 python3)
    # The serve rows load servers with wrk and check their answers with curl; nginx is serve's
    # baseline (the row runs its own, on a free port, and leaves the system's alone).
    if selected serve || selected serve-assign || selected serve-user || selected serve-streams || selected page || selected pages; then packages+=(wrk curl); fi
    if selected serve; then packages+=(nginx-light); fi
    if selected copy || selected serve-pg; then packages+=(postgresql); fi
    if selected serve-pg; then packages+=(wrk curl); fi
    for package in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        log "Installing ${missing[*]}"
        local sudo=""
        [ "$(id -u)" -eq 0 ] || sudo=sudo
        # stdout is kept for the report: apt's chatter goes to stderr.
        $sudo apt-get update >&2
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}" >&2
    fi
    command -v swift >/dev/null || die "swift is not on PATH"
}

build_flagpole() {
    log "Building flagpole (release)"
    # A separate scratch path lets the benchmark build while someone else runs swift test.
    local scratch=()
    [ -n "$SCRATCH" ] && scratch=(--scratch-path "$SCRATCH")
    (cd "$ROOT" && swift build -c release --product flagpole "${scratch[@]}") >&2
    FLAGPOLE="$(cd "$ROOT" && swift build -c release --show-bin-path "${scratch[@]}")/flagpole"
    [ -x "$FLAGPOLE" ] || die "no binary at $FLAGPOLE"
}

make_workdir() {
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/flagpole-bench.XXXXXX")
    mkdir -p "$OUT"
}

generate_document() {
    log "Generating $FEATURES features (seed $SEED)"
    python3 "$HELPERS/generate_features.py" "$FEATURES" "$WORK/features.json" "$SEED"
    NOTES+=("Input: $FEATURES features, $(stat -c %s "$WORK/features.json") bytes, seed $SEED.")
}

# An empty database with the tenant, copied before every timed import so that each run
# imports into an empty environment; and the import baseline's, with import_schema.sql's tables.
make_pristine_databases() {
    log "Creating the pristine databases"
    "$FLAGPOLE" tenant create "$TENANT" --db "$WORK/pristine.sqlite" >/dev/null
    # flagpole opens databases in WAL mode: fold the WAL into the main file so that a plain
    # cp of the .sqlite file is the whole database.
    checkpoint "$WORK/pristine.sqlite"
    sqlite3 -bail "$WORK/pristine-baseline.sqlite" <"$HELPERS/import_schema.sql" >/dev/null
    checkpoint "$WORK/pristine-baseline.sqlite"
}

# Imports the file once, for the export and serve rows.
import_reference() {
    log "Importing once for reference"
    fresh_copy "$WORK/imported.sqlite"
    "$FLAGPOLE" import "$WORK/features.json" --tenant "$TENANT" --db "$WORK/imported.sqlite" >/dev/null
    checkpoint "$WORK/imported.sqlite"
    NOTES+=("Rows written by one import: $(sqlite3 "$WORK/imported.sqlite" "SELECT
        (SELECT count(*) FROM features) || ' features, ' || (SELECT count(*) FROM variations) || ' variations, '
        || (SELECT count(*) FROM revisions) || ' revision (' || (SELECT sum(length(document)) FROM revisions)
        || '-byte document), ' || (SELECT count(*) FROM audit) || ' audit rows, '
        || (SELECT count(*) FROM document_extras) || ' document_extras'").")
}

# The export baseline: the query of bench.d/export.sql, for this tenant and environment.
write_export_baseline() {
    log "Checking the export baseline against flagpole's export"
    render_sql "$HELPERS/export.sql" "$WORK/export.sql" slug="$TENANT" env="$ENVIRONMENT"
    "$FLAGPOLE" export --tenant "$TENANT" --db "$WORK/imported.sqlite" >"$WORK/out.json"
    "$FLAGPOLE" export --compact --tenant "$TENANT" --db "$WORK/imported.sqlite" >"$WORK/out-compact.json"
    sqlite3 -bail "$WORK/imported.sqlite" <"$WORK/export.sql" >"$WORK/out-baseline.json"
    # Same content (key order and layout aside) from all three, or the comparison means nothing.
    same_json "export: flagpole export, export --compact and the sqlite3 query" \
        "$WORK/out.json" "$WORK/out-compact.json" "$WORK/out-baseline.json" || die "the exports differ in content"
    NOTES+=("Export sizes: flagpole $(stat -c %s "$WORK/out.json") bytes, --compact $(stat -c %s "$WORK/out-compact.json") bytes, sqlite3 query $(stat -c %s "$WORK/out-baseline.json") bytes (compact; SQLite 3.40 has no json_pretty).")
}

# An environment holding the tests of bench.d/assignment_features.json, imported by flagpole:
# the starting point of the assign row, and of the history table.
make_tests_database() {
    log "Creating the database of tests"
    local db="$WORK/tests.sqlite"
    "$FLAGPOLE" tenant create "$TENANT" --db "$db" >/dev/null
    "$FLAGPOLE" import "$HELPERS/assignment_features.json" --tenant "$TENANT" --db "$db" >/dev/null
    checkpoint "$db"
}

# The users file; the rows flagpole assigns them, from one untimed `assign --json` on a
# scratch copy (which is also where the bias row starts); the assign baseline's empty database
# (assign_schema.sql) and its SQL, which inserts exactly those rows. Sets TEST_ID.
prepare_assignments() {
    log "Assigning $(thousands "$USERS") users once, untimed, for the baseline's rows"
    local db="$WORK/assigned.sqlite" revision tenant_id environment_id
    seq 0 $((USERS - 1)) | sed 's/^/user-/' >"$WORK/users.txt"
    fresh_copy "$db" "$WORK/tests.sqlite"
    "$FLAGPOLE" assign --feature "$TEST" --users-file "$WORK/users.txt" --tenant "$TENANT" --db "$db" --json \
        >"$WORK/assigned.jsonl"
    checkpoint "$db"
    revision=$(python3 "$HELPERS/assignments_csv.py" "$WORK/assigned.jsonl" "$WORK/assigned.csv")
    read -r tenant_id environment_id <<<"$(scope_ids "$db")"
    TEST_ID=$(sql_value "$db" "SELECT id FROM features
                                WHERE name = '$TEST' AND tenant_id = $tenant_id AND environment_id = $environment_id")
    render_sql "$HELPERS/assign_schema.sql" "$WORK/assign_schema.sql" feature_id="$TEST_ID" test="$TEST"
    sqlite3 -bail "$WORK/assign-pristine.sqlite" <"$WORK/assign_schema.sql" >/dev/null
    checkpoint "$WORK/assign-pristine.sqlite"
    render_sql "$HELPERS/assign.sql" "$WORK/assign.sql" environment_id="$environment_id" \
        feature_id="$TEST_ID" revision="$revision" csv="$WORK/assigned.csv"
}

# dump_assignments DB OUTPUT: the test's recorded users, points with all 17 digits.
dump_assignments() {
    sqlite3 -bail "$1" "SELECT user_id, printf('%!.17g', point), variation, revision
                          FROM assignments WHERE feature_id = $TEST_ID ORDER BY user_id" >"$2"
}

# dump_events DB REASON OUTPUT: the test's events of one reason, times aside.
dump_events() {
    sqlite3 -bail "$1" "SELECT user_id, previous_variation, variation, printf('%!.17g', point), revision
                          FROM assignment_events WHERE feature_id = $TEST_ID AND reason = '$2'
                         ORDER BY user_id, id" >"$3"
}

# The history table: EVENTS events over USERS users and the tests of one environment, in a
# copy of the tests database, and a sample of users (who all have events) to query.
make_history_database() {
    log "Building a history of $(thousands "$EVENTS") events over $(thousands "$USERS") users (a minute or two)"
    local db="$WORK/history.sqlite" tenant_id environment_id schema drops indexes
    fresh_copy "$db" "$WORK/tests.sqlite"
    read -r tenant_id environment_id <<<"$(scope_ids "$db")"
    schema=$(sqlite3 -bail "$db" "SELECT type, name, sql FROM sqlite_master ORDER BY name")
    # Indexes built once at the end, from their own SQL, are the same indexes, built faster.
    drops=$(sqlite3 -bail "$db" "SELECT 'DROP INDEX ' || name || ';' FROM sqlite_master
                                   WHERE type = 'index' AND tbl_name = 'assignment_events' AND sql IS NOT NULL")
    indexes=$(sqlite3 -bail "$db" "SELECT sql || ';' FROM sqlite_master
                                     WHERE type = 'index' AND tbl_name = 'assignment_events' AND sql IS NOT NULL")
    sqlite3 -bail "$db" "$drops"
    render_sql "$HELPERS/history_events.sql" "$WORK/history_events.sql" tenant_id="$tenant_id" \
        environment_id="$environment_id" users="$USERS" events="$EVENTS" start_ms=$(($(date +%s) * 1000 - EVENTS * 10))
    sqlite3 -bail "$db" <"$WORK/history_events.sql"
    log "Indexing the history"
    sqlite3 -bail "$db" "PRAGMA cache_size = -524288; $indexes"
    [ "$(sqlite3 -bail "$db" "SELECT type, name, sql FROM sqlite_master ORDER BY name")" = "$schema" ] \
        || die "building the history changed the schema of $db"
    checkpoint "$db"
    python3 - "$WORK/history-sample.txt" "$HISTORY_SAMPLE" "$((USERS < EVENTS ? USERS : EVENTS))" "$SEED" <<'PY'
import random, sys
path, count, users, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
with open(path, "w", encoding="utf-8") as out:
    out.writelines(f"user-{n}\n" for n in random.Random(seed).sample(range(users), count))
PY
    NOTES+=("History table: $(thousands "$EVENTS") events of $(sql_value "$db" "SELECT count(DISTINCT feature_id) FROM assignment_events") tests over $(thousands "$USERS") users ($(thousands $((EVENTS / USERS))) each, scattered through the table as if written over time), $(thousands "$(stat -c %s "$db")") bytes with flagpole's indexes; generated by bench.d/history_events.sql in a tenant and tests made by flagpole.")
}

# run_package NAME FILTER [PREFIX...]: runs the Benchmarks package's benchmarks whose names
# match the regular expression FILTER (under PREFIX, e.g. taskset), on this run's inputs, and
# keeps their JMH export (machine-readable: wall-clock percentiles) in bench-out/package-NAME/.
run_package() {
    local name=$1 filter=$2 dir="$OUT/package-$1"
    shift 2
    log "Running the Benchmarks package: $filter"
    rm -rf "$dir"
    mkdir -p "$dir"
    # The package reads its inputs from these variables (Benchmarks/Benchmarks/FlagpoleBenchmarks/Inputs.swift).
    (cd "$ROOT" && env FLAGPOLE_BENCH_FEATURES_FILE="$WORK/features.json" FLAGPOLE_BENCH_USERS="$USERS" \
        FLAGPOLE_BENCH_RUNS="$RUNS" FLAGPOLE_BENCH_POINTS="$POINTS" \
        FLAGPOLE_BENCH_HISTORY_DB="$WORK/history.sqlite" FLAGPOLE_BENCH_HISTORY_USERS="$WORK/history-sample.txt" \
        FLAGPOLE_BENCH_HISTORY_REPORT="$WORK/history-report.txt" \
        "$@" swift package --package-path Benchmarks --allow-writing-to-directory "$dir" \
        benchmark --filter "$filter" --format jmh --path "$dir" --no-progress) >&2
}

# package_figure NAME BENCHMARK: the median, p99 and mean wall-clock time in milliseconds of a
# package benchmark's iterations, from run_package NAME's export, as "P50 P99 MEAN".
package_figure() {
    python3 - "$OUT/package-$1" "$2" <<'PY'
import glob, json, sys
for path in glob.glob(f"{sys.argv[1]}/*.json"):
    for element in json.load(open(path)):
        if element["benchmark"].rsplit(".", 1)[-1] == sys.argv[2]:
            wall = next(m for name, m in element["secondaryMetrics"].items() if "wall clock" in name.lower())
            ms = 1000 if wall["scoreUnit"] in ("s",) else (1 / 1000 if wall["scoreUnit"] in ("μs", "us") else 1)
            print(f'{wall["scorePercentiles"]["50.0"] * ms:.3f} {wall["scorePercentiles"]["99.0"] * ms:.3f} {wall["score"] * ms:.3f}')
            sys.exit(0)
sys.exit(f"bench: no benchmark {sys.argv[2]} in {sys.argv[1]}")
PY
}

# The package's benchmarks this run asks for: points alone, pinned to one core; the others in
# one run (history reads the history database, the rest the generated file).
run_packages() {
    local main=()
    if selected history; then main+=(history); fi
    if selected package; then main+=(parse validate render import bias-plan import-plan); fi
    if [ ${#main[@]} -gt 0 ]; then run_package main "^($(IFS='|'; echo "${main[*]}"))\$"; fi
    if selected points; then run_package points '^points$' "${PIN[@]}"; fi
}
