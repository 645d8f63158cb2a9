# Scripts/bench's "pages" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

# Every page of the dashboard on the large database: PAGES_FEATURES features (300) with one of
# their tests' USERS users (1 000 000) recorded, signed in with an admin key, each page loaded
# PAGES_LOADS times per round in ROUNDS rounds interleaved with the shared features.json of the
# same server (the baseline: what a CDN-less client costs it). The figure is the median of the
# rounds' medians, min–max of those medians shown; each page passes at ≤ 150 ms.
PAGES_FEATURES=${FLAGPOLE_BENCH_PAGES_FEATURES:-300}
PAGES_LOADS=5

bench_pages() {
    local db="$WORK/pages.sqlite" key csrf code test base
    log "Building the pages row's database: $PAGES_FEATURES features, $(thousands "$USERS") users of one test"
    python3 "$HELPERS/generate_features.py" "$PAGES_FEATURES" "$WORK/pages-features.json" "$SEED"
    "$FLAGPOLE" tenant create "$TENANT" --db "$db" >/dev/null
    "$FLAGPOLE" import "$WORK/pages-features.json" --tenant "$TENANT" --db "$db" >/dev/null
    test=$(python3 -c 'import json, sys
print(next(f["name"] for f in json.load(open(sys.argv[1]))["features"] if f.get("test-variations")))' "$WORK/pages-features.json")
    seq 0 $((USERS - 1)) | sed 's/^/user-/' >"$WORK/pages-users.txt"
    "$FLAGPOLE" assign --feature "$test" --users-file "$WORK/pages-users.txt" --tenant "$TENANT" --db "$db" >/dev/null
    key=$("$FLAGPOLE" key create --tenant "$TENANT" --role admin --name bench --db "$db" 2>/dev/null)
    checkpoint "$db"
    start_flagpole "$db" "$WORK/pages.log"
    curl -sS -c "$WORK/pages.cookies" -b "$WORK/pages.cookies" -o "$WORK/pages-login.html" "$SERVE_URL/login"
    csrf=$(sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p;T;q' "$WORK/pages-login.html")
    code=$(curl -sS -c "$WORK/pages.cookies" -b "$WORK/pages.cookies" -o /dev/null -w '%{http_code}' \
        --data-urlencode "csrf=$csrf" --data-urlencode "key=$key" --data-urlencode "next=/" "$SERVE_URL/login")
    [ "$code" = 303 ] || die "pages: signing in answered $code"
    base="/tenants/$TENANT/$ENVIRONMENT"
    local encoded
    encoded=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$test")
    local pages=(
        "Features|$base" "Features, searched|$base?q=new" "Features, table|$base?view=table"
        "Configs|$base/configs" "a test|$base/features/$encoded" "its results|$base/features/$encoded/results"
        "a user|$base/users?user=user-7" "Revisions|$base/revisions" "Segments|$base/segments"
    )
    local entry name path round ours base_times
    for entry in "${pages[@]}"; do
        name=${entry%%|*}
        path=${entry#*|}
        ours=()
        base_times=()
        for round in $(seq 1 "$ROUNDS"); do
            base_times+=("$(pages_median "$SERVE_URL/t/$TENANT/$ENVIRONMENT/features.json")")
            ours+=("$(pages_median "$SERVE_URL$path")")
        done
        read -r ours_median ours_spread < <(pages_spread "${ours[@]}")
        read -r base_median base_spread < <(pages_spread "${base_times[@]}")
        add_row "dashboard page: $name ($PAGES_FEATURES features, $(thousands "$USERS") users)" \
            "$ours_median ms ($ours_spread)" "$base_median ms ($base_spread)" \
            "$(awk -v a="$ours_median" -v b="$base_median" 'BEGIN { printf "%.1f", a / b }')" "≤ 150 ms" \
            "$(awk -v a="$ours_median" 'BEGIN { print (a <= 150 ? "PASS" : "MISS") }')"
    done
    stop_server "$SERVE_PID" || failed ERRORS "pages: flagpole serve exited with status $? on SIGTERM"
    NOTES+=("pages: each page of \`flagpole serve\` on a database of $PAGES_FEATURES generated features (seed $SEED) with $(thousands "$USERS") users recorded in \"$test\", signed in with an admin key; curl's time_total, the median of $PAGES_LOADS loads per round, $ROUNDS rounds interleaved with the baseline (the shared features.json of the same server, $(stat -c %s "$WORK/pages-features.json")-byte source); shown: the median of the rounds' medians (min–max).")
}

# pages_median URL: the median time_total of PAGES_LOADS GETs (cookies of the signed-in browser), in ms.
pages_median() {
    local times=() run code
    for run in $(seq 1 "$PAGES_LOADS"); do
        code=$(curl -sS -b "$WORK/pages.cookies" -o /dev/null -w '%{http_code} %{time_total}' "$1")
        [ "${code% *}" = 200 ] || die "pages: GET $1 answered ${code% *}"
        times+=("${code#* }")
    done
    printf '%s\n' "${times[@]}" | sort -g | awk '{ t[NR] = $1 * 1000 } END { printf "%.1f\n", t[int((NR + 1) / 2)] }'
}

# pages_spread NUMBERS...: "median min–max", in milliseconds with one decimal.
pages_spread() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%.1f %.1f–%.1f\n", v[int((NR + 1) / 2)], v[1], v[NR] }'
}
