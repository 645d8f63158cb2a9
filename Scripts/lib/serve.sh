#!/usr/bin/env bash
# Scripts/lib/serve.sh: `flagpole serve` on a free port, waited for until it listens: the one way
# every check and benchmark starts a server.
#
#   source Scripts/lib/serve.sh
#   flagpole_binary                      # sets FLAGPOLE: $FLAGPOLE_BIN, else `swift build`'s
#   serve_start LOG [serve arguments…]   # sets SERVE_PID, SERVE_URL, and with --demo SERVE_KEY
#   serve_stop                           # SIGTERM to SERVE_PID, then waits for it
#   serve_key DB ENV NAME                # prints a new delivery key of tenant demo for ENV
#
# From another language, run it: `Scripts/lib/serve.sh LOG [serve arguments…]` prints the
# server's pid, URL and (with --demo) admin key on three lines and leaves it running; the
# caller stops it with SIGTERM.

flagpole_binary() {
    if [ -n "${FLAGPOLE_BIN:-}" ]; then
        FLAGPOLE="$FLAGPOLE_BIN"
    else
        local root
        root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
        (cd "$root" && swift build --product flagpole >&2)
        FLAGPOLE="$(cd "$root" && swift build --show-bin-path)/flagpole"
    fi
    [ -x "$FLAGPOLE" ] || { echo "serve.sh: no flagpole binary at $FLAGPOLE" >&2; return 1; }
}

# Waits for the "Listening on URL" line (and, with --demo, the admin key printed after it): as
# long as it takes the server, which on PostgreSQL loads the demo in about a minute, unless the
# process ends first; 10 minutes at most.
serve_start() {
    local log=$1 demo="" argument
    shift
    for argument in "$@"; do [ "$argument" = --demo ] && demo=yes; done
    [ -n "${FLAGPOLE:-}" ] || flagpole_binary
    : >"$log"
    "$FLAGPOLE" serve --host 127.0.0.1 --port 0 --log-level warning "$@" >>"$log" 2>&1 </dev/null &
    SERVE_PID=$!
    SERVE_URL=""
    SERVE_KEY=""
    local deadline=$((SECONDS + 600))
    while [ "$SECONDS" -lt "$deadline" ]; do
        SERVE_URL="$(sed -n 's|^Listening on \(http://[^ ]*\) .*|\1|p' "$log")"
        SERVE_KEY="$(grep -o 'fp_[0-9a-f]\{48\}' "$log" | head -1 || true)"
        if [ -n "$SERVE_URL" ] && { [ -z "$demo" ] || [ -n "$SERVE_KEY" ]; }; then return 0; fi
        kill -0 "$SERVE_PID" 2>/dev/null || { echo "flagpole serve stopped on start:" >&2; cat "$log" >&2; return 1; }
        sleep 0.05
    done
    echo "flagpole serve did not listen within 10 minutes:" >&2
    cat "$log" >&2
    serve_stop
    return 1
}

serve_stop() {
    if [ -n "${SERVE_PID:-}" ]; then
        kill "$SERVE_PID" 2>/dev/null || true
        wait "$SERVE_PID" 2>/dev/null || true
        SERVE_PID=""
    fi
}

serve_key() {
    local created key
    [ -n "${FLAGPOLE:-}" ] || flagpole_binary
    created="$("$FLAGPOLE" key create --tenant demo --role delivery --env "$2" --name "$3" --db "$1" 2>&1)" \
        || { echo "flagpole key create --env $2 failed: $created" >&2; return 1; }
    key="$(grep -o 'fp_[0-9a-f]\{48\}' <<<"$created" | head -1)"
    [ -n "$key" ] || { echo "flagpole key create printed no key: $created" >&2; return 1; }
    echo "$key"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    [ $# -ge 1 ] || { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
    serve_start "$@"
    printf '%s\n%s\n%s\n' "$SERVE_PID" "$SERVE_URL" "$SERVE_KEY"
fi
