# Scripts/bench.d/servers.sh: starting, loading and stopping the servers of the serve rows
# (flagpole serve, nginx, wrk), sourced by Scripts/bench.
# shellcheck shell=bash

# free_port: a TCP port of 127.0.0.1 that nothing listens on now (nginx cannot pick one itself).
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# running PID: whether the process runs (a server that died stays a zombie until `wait`).
running() {
    local state
    state=$(ps -o stat= -p "$1") && [[ "$state" != Z* ]]
}

# start_flagpole DB LOG: `flagpole serve` on DB, on a port it picks, its output in LOG, started
# and waited for by Scripts/lib/serve.sh (as every check starts it); sets SERVE_PID and SERVE_URL.
# Warnings only: an access log line per request would time the logging, not the serving.
start_flagpole() {
    local db=$1 log=$2
    shift 2
    serve_start "$log" --db "$db" "$@" || die "flagpole serve did not start (above)"
    SERVER_PIDS+=("$SERVE_PID")
}

# start_nginx ROOT CACHE_CONTROL: nginx serving the files under ROOT on a free loopback port as
# a CDN's origin would (one worker process, sendfile, ETag, no access log), with flagpole's
# Cache-Control so that both send the same headers; sets NGINX_PID and NGINX_URL. Its
# configuration, pid file, error log and temporary files are in WORK/nginx, so it runs as
# the current user and touches nothing of the system's nginx.
start_nginx() {
    local root=$1 cache_control=$2 dir="$WORK/nginx" port user="" waited=0
    port=$(free_port)
    mkdir -p "$dir/temp"
    # Run as root, nginx would hand its worker to "nobody", who cannot read the work directory.
    [ "$(id -u)" -ne 0 ] || user="user $(id -un) $(id -gn);"
    cat >"$dir/nginx.conf" <<CONF
$user
worker_processes 1;
daemon off;
pid "$dir/nginx.pid";
error_log "$dir/error.log" warn;
events {
    worker_connections 1024;
}
http {
    access_log off;
    sendfile on;
    etag on;
    types {
        application/json json;
    }
    client_body_temp_path "$dir/temp/client_body";
    proxy_temp_path "$dir/temp/proxy";
    fastcgi_temp_path "$dir/temp/fastcgi";
    uwsgi_temp_path "$dir/temp/uwsgi";
    scgi_temp_path "$dir/temp/scgi";
    server {
        listen 127.0.0.1:$port;
        root "$root";
        add_header Cache-Control "$cache_control";
    }
}
CONF
    # -e: errors before the configuration is read go to the work directory too, not /var/log.
    nginx -c "$dir/nginx.conf" -p "$dir" -e "$dir/error.log" &
    NGINX_PID=$!
    SERVER_PIDS+=("$NGINX_PID")
    NGINX_URL="http://127.0.0.1:$port"
    until curl -s -o /dev/null "$NGINX_URL/"; do
        running "$NGINX_PID" || die "nginx stopped on start: $(cat "$dir/error.log")"
        [ "$waited" -lt 100 ] || die "nginx did not answer on $NGINX_URL in 10 s: $(cat "$dir/error.log")"
        sleep 0.1
        waited=$((waited + 1))
    done
}

# stop_server PID: stops a server this script started as Ctrl-C would (SIGTERM: flagpole
# finishes the requests in flight), killing it if it still runs after 10 s; returns its exit
# status (0 for a clean stop).
stop_server() {
    local pid=$1 waited=0 status=0 kept=() other
    kill -TERM "$pid" 2>/dev/null || true
    while running "$pid" && [ "$waited" -lt 100 ]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    if running "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
    wait "$pid" 2>/dev/null || status=$?
    for other in "${SERVER_PIDS[@]}"; do
        [ "$other" = "$pid" ] || kept+=("$other")
    done
    SERVER_PIDS=("${kept[@]}")
    return "$status"
}

# peak_rss_mib PID: the most memory the process has held resident (VmHWM), in MiB.
peak_rss_mib() {
    awk '/^VmHWM:/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status"
}

# server_log_note NAME LOG: a note with what a server logged besides its start (warnings and
# errors only: the serve rows start flagpole with --log-level warning), when it logged any.
server_log_note() {
    local lines
    lines=$(grep -cv '^Listening on ' "$2" || true)
    [ "$lines" -eq 0 ] || NOTES+=("**$1: the server logged $lines lines under load**, the first: \`$(grep -v '^Listening on ' "$2" | head -1)\` (all of them in ${OUT#"$ROOT/"}/$(basename "$2")).")
    cp "$2" "$OUT/"
}

# run_wrk NAME URL [SCRIPT [ARG...]]: loads URL with wrk for HTTP_SECONDS, on one thread with
# HTTP_CONNECTIONS connections (with SCRIPT and its ARGs when given), keeps its output in
# bench-out/NAME.txt and sets WRK_RATE (requests/s), WRK_P99_MS, WRK_REQUESTS, WRK_SECONDS
# and WRK_BYTES (bytes read per request). Answers other than 2xx and 3xx and socket errors
# fail the row (timeouts too: wrk leaves them out of its latencies, which would hide them).
# No warm-up run: the curl checks before each run have filled flagpole's cache of rendered
# documents and the page cache, and each run opens its connections anew.
run_wrk() {
    local name=$1 url=$2 output="$OUT/$1.txt" status_errors socket_errors
    local args=(--threads 1 --connections "$HTTP_CONNECTIONS" --duration "${HTTP_SECONDS}s" --latency --timeout "$WRK_TIMEOUT")
    shift 2
    [ $# -eq 0 ] || args+=(--script "$1")
    log "Loading $url for $HTTP_SECONDS s ($name)"
    # The script's arguments go after `--`, so that an ETag or a key is never read as an option.
    wrk "${args[@]}" "$url" -- "${@:2}" >"$output"
    cat "$output" >&2
    # Units as wrk prints them: latencies in us, ms, s, m or h; sizes in B, KB, MB, GB or TB
    # (powers of 1024). The 99% line is the one of --latency's distribution.
    read -r WRK_RATE WRK_P99_MS WRK_REQUESTS WRK_SECONDS WRK_BYTES status_errors socket_errors < <(awk '
        function ms(text,    unit) {
            unit = text
            gsub(/[0-9.,]/, "", unit)
            return (text + 0) * (unit == "us" ? 0.001 : unit == "ms" ? 1 : unit == "s" ? 1000 : unit == "m" ? 60000 : 3600000)
        }
        function bytes(text,    unit) {
            unit = text
            gsub(/[0-9.,]/, "", unit)
            return (text + 0) * (unit == "KB" ? 1024 : unit == "MB" ? 1048576 : unit == "GB" ? 1073741824 : unit == "TB" ? 1099511627776 : 1)
        }
        /^Requests\/sec:/ { rate = $2 }
        $1 == "99%" { p99 = ms($2) }
        / requests in .* read$/ { requests = $1; seconds = ms($4) / 1000; read = bytes($5) }
        /Non-2xx or 3xx responses:/ { status = $NF }
        /Socket errors:/ { gsub(",", ""); socket = $4 + $6 + $8 + $10 }
        END {
            if (rate == "" || p99 == "" || requests == "") exit 1
            printf "%.1f %.2f %d %.2f %.0f %d %d\n", rate, p99, requests, seconds, (requests > 0 ? read / requests : 0), status, socket
        }' "$output") || die "could not read wrk's results in $output"
    if [ "$status_errors" -gt 0 ] || [ "$socket_errors" -gt 0 ] || [ "$WRK_REQUESTS" -eq 0 ]; then
        failed ERRORS "$name: wrk got $(thousands "$WRK_REQUESTS") answers, $status_errors of them neither 2xx nor 3xx, and $socket_errors socket errors: \`$(awk '/Non-2xx|Socket errors/ { sub(/^ +/, ""); printf "%s%s", (n++ ? "; " : ""), $0 }' "$output")\`"
    fi
}

# failed RESULT WHAT: says WHAT went wrong in the log and in a note, shows RESULT instead of

# interleaved_wrk NAME BASELINE_ARGS FLAGPOLE_ARGS: ROUNDS rounds, each the baseline's run (run_wrk
# with the arguments of the array named BASELINE_ARGS) then flagpole's, so drift on the machine
# falls on both; sets BASE_RATE and OURS_RATE (the medians) and BASE_SPREAD, OURS_SPREAD ("min–max").
interleaved_wrk() {
    local name=$1 round base=() ours=()
    local -n baseline_args=$2 flagpole_args=$3
    for round in $(seq 1 "$ROUNDS"); do
        run_wrk "$name-baseline-$round" "${baseline_args[@]}"
        base+=("$WRK_RATE")
        run_wrk "$name-$round" "${flagpole_args[@]}"
        ours+=("$WRK_RATE")
    done
    read -r BASE_RATE BASE_SPREAD < <(spread "${base[@]}")
    read -r OURS_RATE OURS_SPREAD < <(spread "${ours[@]}")
}

# spread NUMBERS...: "median min–max", whole numbers with thin spaces.
spread() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%.0f %.0f–%.0f\n", v[int((NR + 1) / 2)], v[1], v[NR] }'
}
