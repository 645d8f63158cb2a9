# Scripts/bench's "signins" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

# Members signing in with a password (scrypt at OWASP's N = 2^17, r = 8, p = 1):
# - one at a time: the answer to POST /login, against the same scrypt in Python's hashlib
#   (OpenSSL's), in ROUNDS interleaved rounds;
# - SIGNINS at once: the wall time of all of them and the server's peak memory over idle
#   (VmHWM − VmRSS before), against the same number of hashlib.scrypt in two processes (two at
#   a time, as the server allows).
SIGNINS=${FLAGPOLE_BENCH_SIGNINS:-50}
SIGNIN_PASSWORD="correct horse battery staple"

bench_signins() {
    local db="$WORK/signins.sqlite" token code round ours=() base=() idle peak
    "$FLAGPOLE" tenant create "$TENANT" --db "$db" >/dev/null
    token=$("$FLAGPOLE" member add bench@example.com --name Bench --role reader --tenant "$TENANT" --db "$db" 2>/dev/null \
        | sed -n 's/.*token=\(fpl_[0-9a-f]*\).*/\1/p')
    start_flagpole "$db" "$WORK/signins.log"
    curl -sS -c "$WORK/signins.cookies" -o "$WORK/signins-welcome.html" "$SERVE_URL/welcome?token=$token"
    code=$(curl -sS -b "$WORK/signins.cookies" -o /dev/null -w '%{http_code}' \
        --data-urlencode "csrf=$(signins_csrf "$WORK/signins-welcome.html")" --data-urlencode "token=$token" \
        --data-urlencode "password=$SIGNIN_PASSWORD" --data-urlencode "repeated=$SIGNIN_PASSWORD" "$SERVE_URL/welcome")
    [ "$code" = 303 ] || die "signins: accepting the invitation answered $code"
    for round in $(seq 1 "$ROUNDS"); do
        base+=("$(python3 "$HELPERS/scrypt_baseline.py" 1 1)")
        ours+=("$(signins_once "$round")")
    done
    local ours_median ours_spread base_median base_spread
    read -r ours_median ours_spread < <(signins_spread "${ours[@]}")
    read -r base_median base_spread < <(signins_spread "${base[@]}")
    add_row "sign-in with a password, one at a time (POST /login; baseline: hashlib.scrypt)" \
        "$ours_median ms ($ours_spread)" "$base_median ms ($base_spread)" \
        "$(awk -v a="$ours_median" -v b="$base_median" 'BEGIN { printf "%.2f", a / b }')" "time ≤ 1.5" \
        "$(awk -v a="$ours_median" -v b="$base_median" 'BEGIN { print (a / b <= 1.5 ? "PASS" : "MISS") }')"
    idle=$(signins_memory VmRSS)
    local start end
    start=$(date +%s.%N)
    for round in $(seq 1 "$SIGNINS"); do signins_once "c$round" >"$WORK/signins-c$round.ms" & done
    wait_jobs_but_server
    end=$(date +%s.%N)
    peak=$(signins_memory VmHWM)
    local wall baseline_wall latencies
    wall=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", (e - s) * 1000 }')
    baseline_wall=$(python3 "$HELPERS/scrypt_baseline.py" "$SIGNINS" 2)
    latencies=$(cat "$WORK"/signins-c*.ms | sort -g | awk '{ v[NR] = $1 } END { printf "median %.0f ms, max %.0f ms", v[int((NR + 1) / 2)], v[NR] }')
    report_row "$SIGNINS sign-ins at once, all answered (baseline: $SIGNINS hashlib.scrypt, 2 processes)" \
        "$wall" "$baseline_wall" 1.5
    report_limit_row "$SIGNINS sign-ins at once: peak memory over idle" \
        "+$(( (peak - idle) / 1048576 )) MiB (idle $((idle / 1048576)) MiB)" "2 × 128 MiB = 256 MiB" \
        "$(( (peak - idle) / 1048576 ))" "<=" 320 "≤ 320 MiB"
    stop_server "$SERVE_PID" || failed ERRORS "signins: flagpole serve exited with status $? on SIGTERM"
    NOTES+=("signins: a member's sign-in through the dashboard's form (GET /login for its CSRF token, then POST /login, timed), $ROUNDS rounds interleaved with Python's hashlib.scrypt at the same cost; then $SIGNINS at once: their wall time (each one's latency: $latencies) and the server's peak RSS over its idle RSS, from /proc.")
}

# signins_once NAME: signs in once with a fresh cookie jar; prints the POST's time in ms.
signins_once() {
    local jar="$WORK/signins-$1.jar" page="$WORK/signins-$1.html" answer
    curl -sS -c "$jar" -o "$page" "$SERVE_URL/login"
    answer=$(curl -sS -b "$jar" -o /dev/null -w '%{http_code} %{time_total}' --data-urlencode "csrf=$(signins_csrf "$page")" \
        --data-urlencode "email=bench@example.com" --data-urlencode "password=$SIGNIN_PASSWORD" "$SERVE_URL/login")
    [ "${answer% *}" = 303 ] || die "signins: signing in answered ${answer% *}"
    awk -v t="${answer#* }" 'BEGIN { printf "%.1f\n", t * 1000 }'
}

# signins_spread NUMBERS...: "median min–max".
signins_spread() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%.1f %.1f–%.1f\n", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

signins_csrf() { sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p;T;q' "$1"; }

# signins_memory FIELD: the server's VmRSS (now) or VmHWM (peak) in bytes.
signins_memory() { awk -v f="$1:" '$1 == f { print $2 * 1024 }' "/proc/$SERVE_PID/status"; }

# Waits for the background sign-ins, not for the server.
wait_jobs_but_server() {
    local job
    for job in $(jobs -p); do [ "$job" = "$SERVE_PID" ] || wait "$job"; done
}
