# Scripts/bench.d/lib.sh: the bench's generic helpers (logging, SQLite files, hyperfine, the
# table), sourced by Scripts/bench after it sets its configuration and globals.
# shellcheck shell=bash

log() { printf '\n==> %s\n' "$*" >&2; }
die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

# selected ROW: whether FLAGPOLE_BENCH_ONLY asks for that row (all rows when it is unset).
selected() { [ -z "$ONLY" ] || [[ ",$ONLY," == *",$1,"* ]]; }

check_selection() {
    local row rows=()
    IFS=, read -r -a rows <<<"$ONLY"
    for row in "${rows[@]}"; do
        [[ " ${ALL_ROWS[*]} " == *" $row "* ]] || die "FLAGPOLE_BENCH_ONLY: unknown row '$row' (rows: ${ALL_ROWS[*]})"
    done
}

# thousands N: N with its digits grouped by three, as docs/PERFORMANCE.md writes numbers (1 000 000).
thousands() { sed ':a; s/\B[0-9]\{3\}\>/ &/; ta' <<<"$1"; }

# render_sql TEMPLATE OUTPUT KEY=VALUE...: the template with every :KEY replaced by VALUE.
render_sql() {
    local template=$1 output=$2 pair script=()
    shift 2
    for pair in "$@"; do
        script+=(-e "s|:${pair%%=*}\b|${pair#*=}|g")
    done
    sed "${script[@]}" "$template" >"$output"
}

# fresh_copy_command DB [SOURCE]: prints the shell command that replaces DB with a fresh copy
# of SOURCE (default: the pristine database), a checkpointed database without a WAL.
fresh_copy_command() {
    local db=$1 source=${2:-$WORK/pristine.sqlite}
    printf 'rm -f %q %q %q && cp %q %q' "$db" "$db-wal" "$db-shm" "$source" "$db"
}

fresh_copy() { eval "$(fresh_copy_command "$@")"; }

# checkpoint DB: folds the WAL into the main file, so that a plain cp of DB is the whole database.
checkpoint() {
    sqlite3 "$1" 'PRAGMA wal_checkpoint(TRUNCATE);' >/dev/null
    rm -f "$1-wal" "$1-shm"
}

# sql_value DB QUERY: the one value QUERY returns; fails when it returns nothing.
sql_value() {
    local value
    value=$(sqlite3 -bail "$1" "$2")
    [ -n "$value" ] || die "no value from $1 for: $2"
    printf '%s\n' "$value"
}

# The ids of the bench tenant and its environment in DB, as "TENANT_ID ENVIRONMENT_ID".
scope_ids() {
    sql_value "$1" "SELECT t.id || ' ' || e.id FROM tenants t JOIN environments e ON e.tenant_id = t.id
                     WHERE t.slug = '$TENANT' AND e.name = '$ENVIRONMENT'"
}

# same_rows WHAT FLAGPOLE_DUMP BASELINE_DUMP: whether the dumps are identical. When they are
# not, says where in the log and in a note, marks the next row of the table (add_row) and
# makes the script's exit status non-zero.
same_rows() {
    local what=$1 ours=$2 theirs=$3 first
    cmp -s "$ours" "$theirs" && return 0
    first=$(diff "$ours" "$theirs" | head -6 | tr '\n' ' ' || true)
    printf 'bench: %s differ: flagpole %s rows, baseline %s rows; first differences (< flagpole, > baseline): %s\n' \
        "$what" "$(wc -l <"$ours")" "$(wc -l <"$theirs")" "$first" >&2
    NOTES+=("**$what differ**: flagpole $(wc -l <"$ours") rows, baseline $(wc -l <"$theirs") rows; first differences (< flagpole, > baseline): \`$first\`")
    MISMATCH=1
    DIFFERENCES=$((DIFFERENCES + 1))
    return 1
}

# failed RESULT WHAT: says WHAT went wrong in the log and in a note, shows RESULT instead of
# the next row's result (add_row) and makes the script's exit status non-zero.
failed() {
    printf 'bench: %s\n' "$2" >&2
    NOTES+=("**$2**")
    FAILED=$1
    FAILURES=$((FAILURES + 1))
}

# --- Timing ------------------------------------------------------------------------------

# time_pair NAME PREPARE FLAGPOLE_COMMAND BASELINE_COMMAND [RUNS [BASELINE_PREPARE]]
# Times both commands with hyperfine (same runs: RUNS, default FLAGPOLE_BENCH_RUNS) and sets
# the globals FLAGPOLE_MS and BASELINE_MS to their medians. PREPARE runs before every run of
# both, or of flagpole only when BASELINE_PREPARE is given for the baseline's (so that each
# command's last run leaves its own database to check); PREPARE may be "" for none.
time_pair() {
    local name=$1 prepare=$2 flagpole_command=$3 baseline_command=$4 runs=${5:-$RUNS} baseline_prepare=${6:-}
    local json="$OUT/$name.json"
    local args=(--warmup 1 --runs "$runs" --style basic --export-json "$json")
    [ -n "$prepare" ] && args+=(--prepare "$prepare")
    [ -n "$baseline_prepare" ] && args+=(--prepare "$baseline_prepare")
    log "Timing $name"
    hyperfine "${args[@]}" \
        --command-name flagpole "$flagpole_command" \
        --command-name baseline "$baseline_command" >&2
    FLAGPOLE_MS=$(median_ms "$json" flagpole)
    BASELINE_MS=$(median_ms "$json" baseline)
}

# median_ms HYPERFINE_JSON COMMAND_NAME: the median of that command, in milliseconds.
median_ms() {
    python3 - "$1" "$2" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
median = next(r["median"] for r in results if r["command"] == sys.argv[2])
print(f"{median * 1000:.1f}")
PY
}

# --- The table ---------------------------------------------------------------------------

# add_row NAME FLAGPOLE BASELINE RATIO TARGET RESULT: one line of the table, cells as given.
# A row whose comparison found different rows (same_rows) says so instead of its result, and
# so does a row whose measurement saw errors (failed).
add_row() {
    local result=$6
    if [ "$MISMATCH" = 1 ]; then
        result="ROWS DIFFER"
        MISMATCH=0
    elif [ -n "$FAILED" ]; then
        result=$FAILED
        FAILED=""
    fi
    ROWS+=("| $1 | $2 | $3 | $4 | $5 | $result |")
}

# report_row NAME FLAGPOLE_MS BASELINE_MS TARGET
# Adds a row of two times: the ratio flagpole/baseline passes when it is at most TARGET.
report_row() {
    local name=$1 flagpole_ms=$2 baseline_ms=$3 target=$4 cells
    cells=$(awk -v f="$flagpole_ms" -v b="$baseline_ms" -v t="$target" 'BEGIN {
        r = f / b
        printf "%.1f ms\t%.1f ms\t%.2f\ttime ≤ %.1f\t%s", f, b, r, t, (r <= t ? "PASS" : "MISS")
    }')
    IFS=$'\t' read -r -a cells <<<"$cells"
    add_row "$name" "${cells[@]}"
}

# report_throughput_row NAME COUNT UNIT FLAGPOLE_MS BASELINE_MS TARGET
# Adds a row of two rates, COUNT UNIT per second: the ratio flagpole/baseline of the rates
# passes when it is at least TARGET.
report_throughput_row() {
    local name=$1 count=$2 unit=$3 flagpole_ms=$4 baseline_ms=$5 target=$6 cells
    cells=$(awk -v c="$count" -v f="$flagpole_ms" -v b="$baseline_ms" -v t="$target" 'BEGIN {
        r = b / f
        printf "%.0f\t%.0f\t%.1f\t%.1f\t%.2f\tthroughput ≥ %.1f\t%s",
            c * 1000 / f, c * 1000 / b, f / 1000, b / 1000, r, t, (r >= t ? "PASS" : "MISS")
    }')
    IFS=$'\t' read -r -a cells <<<"$cells"
    add_row "$name" "$(thousands "${cells[0]}") $unit/s (${cells[2]} s)" "$(thousands "${cells[1]}") $unit/s (${cells[3]} s)" \
        "${cells[4]}" "${cells[5]}" "${cells[6]}"
}

# report_rate_row NAME UNIT FLAGPOLE_RATE BASELINE_RATE TARGET [FLAGPOLE_DETAIL BASELINE_DETAIL]
# Adds a row of two rates measured as rates (UNIT per second, as wrk reports requests), each
# followed by its DETAIL when given: the ratio flagpole/baseline passes when it is at least TARGET.
report_rate_row() {
    local name=$1 unit=$2 flagpole=$3 baseline=$4 target=$5 flagpole_detail=${6:+, $6} baseline_detail=${7:+, $7} cells
    cells=$(awk -v f="$flagpole" -v b="$baseline" -v t="$target" 'BEGIN {
        r = f / b
        printf "%.0f\t%.0f\t%.2f\tthroughput ≥ %.1f\t%s", f, b, r, t, (r >= t ? "PASS" : "MISS")
    }')
    IFS=$'\t' read -r -a cells <<<"$cells"
    add_row "$name" "$(thousands "${cells[0]}") $unit/s$flagpole_detail" "$(thousands "${cells[1]}") $unit/s$baseline_detail" \
        "${cells[2]}" "${cells[3]}" "${cells[4]}"
}

# report_limit_row NAME FLAGPOLE BASELINE VALUE OPERATOR LIMIT TARGET
# Adds a row with an absolute target: passes when VALUE OPERATOR LIMIT holds (<= or >=).
# FLAGPOLE, BASELINE and TARGET are the cells as shown; there is no ratio.
report_limit_row() {
    local name=$1 flagpole=$2 baseline=$3 value=$4 operator=$5 limit=$6 target=$7 result
    result=$(awk -v v="$value" -v o="$operator" -v l="$limit" 'BEGIN {
        print ((o == "<=" ? v <= l : v >= l) ? "PASS" : "MISS")
    }')
    add_row "$name" "$flagpole" "$baseline" "–" "$target" "$result"
}

machine_lines() {
    local commit
    commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
    git -C "$ROOT" diff --quiet HEAD -- Sources Package.swift Migrations 2>/dev/null || commit="$commit (with uncommitted changes)"
    echo "- Date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "- Machine: $(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), $(uname -sr)"
    echo "- flagpole: $commit, $(swift --version 2>&1 | head -1)"
    echo "- sqlite3 $(sqlite3 --version | cut -d' ' -f1), $(hyperfine --version), $(python3 --version)"
    if selected serve || selected serve-assign; then
        # wrk -v exits with status 1 after its version line.
        echo "- $(wrk -v 2>&1 | sed -n '1s/ \[.*//p' || true)$(selected serve && echo ", $(nginx -v 2>&1 | sed 's/^nginx version: //')")"
    fi
    echo "- Load average when the report was written: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- Times are medians of $RUNS runs (assign and bias: $BULK_RUNS) after 1 warm-up; hyperfine's full results are in ${OUT#"$ROOT/"}/*.json."
    echo "- Figures of the Benchmarks package (ordo-one/benchmark, in-process) are its wall-clock percentiles; its JMH export is in ${OUT#"$ROOT/"}/package-*/."
    if selected serve || selected serve-assign; then
        echo "- Rates of the serve rows are wrk's over one run of $HTTP_SECONDS s each; its output is in ${OUT#"$ROOT/"}/serve*.txt."
    fi
}

print_report() {
    local report="$OUT/results.md" row note
    {
        echo "# Flagpole benchmark"
        echo
        machine_lines
        echo
        echo "| measurement | flagpole | baseline | ratio flagpole/baseline | target | result |"
        echo "|---|---:|---:|---:|---|---|"
        for row in "${ROWS[@]}"; do echo "$row"; done
        echo
        for note in "${NOTES[@]}"; do echo "- $note"; done
    } >"$report"
    echo
    cat "$report"
    echo
    echo "Written to ${report#"$ROOT/"}."
    [ "$DIFFERENCES" -eq 0 ] || die "$DIFFERENCES comparison(s) found different rows in flagpole and a baseline (see the notes)"
    [ "$FAILURES" -eq 0 ] || die "$FAILURES measurement(s) saw errors or different bytes (see the notes)"
}

# same_json WHAT FILE...: whether the JSON files decode to the same value (key order and layout
# aside). When they do not, says so as same_rows does and returns 1.
same_json() {
    local what=$1
    shift
    python3 - "$@" <<'PY' && return 0
import json, sys
docs = [json.load(open(path, encoding="utf-8")) for path in sys.argv[1:]]
sys.exit(0 if all(doc == docs[0] for doc in docs) else 1)
PY
    printf 'bench: %s differ in content\n' "$what" >&2
    NOTES+=("**$what differ in content.**")
    MISMATCH=1
    DIFFERENCES=$((DIFFERENCES + 1))
    return 1
}
