# Scripts/bench's "serve" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

bench_serve() {
    local db="$WORK/serve.sqlite" root="$WORK/www" checks="$WORK/serve-check" real_tenant=real
    local cache_control path label name size server url etag code peak status lua=() sizes=()
    local -A url_of etag_of rate p99
    fresh_copy "$db" "$WORK/imported.sqlite"
    # Two documents: a real app's file (what apps fetch: a few kilobytes, so each request's
    # own cost shows) and the generated one (megabytes, so the bytes' cost shows).
    "$FLAGPOLE" tenant create "$real_tenant" --db "$db" >/dev/null
    "$FLAGPOLE" import "$REAL_FIXTURE" --tenant "$real_tenant" --db "$db" >/dev/null
    local -A label_of=(
        ["/t/$real_tenant/$ENVIRONMENT/features.json"]="a real app's file ($(basename "$REAL_FIXTURE"))"
        ["/t/$TENANT/$ENVIRONMENT/features.json"]="$(thousands "$FEATURES") generated features"
    )
    local paths=("/t/$real_tenant/$ENVIRONMENT/features.json" "/t/$TENANT/$ENVIRONMENT/features.json")
    for path in "${paths[@]}"; do
        mkdir -p "$root${path%/*}"
        "$FLAGPOLE" export --tenant "$(cut -d/ -f3 <<<"$path")" --env "$ENVIRONMENT" --db "$db" >"$root$path"
    done
    log "Starting flagpole serve and nginx"
    start_flagpole "$db" "$WORK/serve.log"
    cache_control=$(curl -sS -D - -o /dev/null "$SERVE_URL${paths[0]}" | sed -n 's/^cache-control: *//Ip' | tr -d '\r')
    [ -n "$cache_control" ] || die "flagpole serve sent no Cache-Control for ${paths[0]}"
    start_nginx "$root" "$cache_control"

    for path in "${paths[@]}"; do
        size=$(stat -c %s "$root$path")
        sizes+=("$(thousands "$size")")
        label=${label_of[$path]}
        # Both must answer the same bytes (`flagpole export`'s) and honour their own ETags, or
        # the comparison means nothing.
        log "Checking both servers' answers for $path with curl"
        url_of=([flagpole]="$SERVE_URL$path" [nginx]="$NGINX_URL$path")
        for server in flagpole nginx; do
            url=${url_of[$server]}
            code=$(curl -sS -D "$checks-$server.headers" -o "$checks-$server.json" -w '%{http_code}' "$url")
            [ "$code" = 200 ] || die "$server answered $code to GET $url"
            etag=$(sed -n 's/^etag: *//Ip' "$checks-$server.headers" | tr -d '\r')
            [[ "$etag" == '"'* ]] || die "$server sent no strong ETag for $url (ETag: '$etag')"
            code=$(curl -sS -o /dev/null -w '%{http_code}' -H "If-None-Match: $etag" "$url")
            [ "$code" = 304 ] || die "$server answered $code, not 304, to GET $url with If-None-Match: $etag"
            etag_of[$server]=$etag
        done
        if ! cmp -s "$checks-flagpole.json" "$root$path"; then
            failed "BYTES DIFFER" "serve: flagpole served $(stat -c %s "$checks-flagpole.json") bytes for $path, not the $size bytes of \`flagpole export\` that nginx serves; first difference: $(cmp "$checks-flagpole.json" "$root$path" 2>&1 || true)"
        fi
        cmp -s "$checks-nginx.json" "$root$path" || die "nginx did not serve the exported file $path as it is"

        for status in 200 304; do
            for server in flagpole nginx; do
                url=${url_of[$server]}
                lua=()
                [ "$status" = 200 ] || lua=("$HELPERS/not_modified.lua" "${etag_of[$server]}")
                run_wrk "serve-$status-$server-$(cut -d/ -f3 <<<"$path")" "$url" "${lua[@]}"
                # What wrk read per answer tells whether it got the answers it asked for: the
                # document for 200 (wrk's total is rounded to 3 digits: 2 % spare), headers for 304.
                if { [ "$status" = 200 ] && [ "$WRK_BYTES" -lt $((size * 98 / 100)) ]; } ||
                   { [ "$status" = 304 ] && [ "$size" -gt 4096 ] && [ "$WRK_BYTES" -ge $((size / 2)) ]; }; then
                    failed ERRORS "serve: wrk read $WRK_BYTES bytes per answer from $server on the $status path, for a $size-byte document"
                fi
                rate[$server]=$WRK_RATE
                p99[$server]=$WRK_P99_MS
            done
            if [ "$status" = 200 ]; then
                name="serve GET 200, $label, $(thousands "$size") bytes"
            else
                name="serve GET 304 (If-None-Match), $label"
            fi
            report_rate_row "$name" requests "${rate[flagpole]}" "${rate[nginx]}" 1.0 \
                "p99 ${p99[flagpole]} ms" "p99 ${p99[nginx]} ms"
        done
    done

    running "$SERVE_PID" || die "flagpole serve died under load: $(tail -5 "$WORK/serve.log")"
    peak=$(peak_rss_mib "$SERVE_PID")
    stop_server "$NGINX_PID" || die "nginx exited with status $? when stopped: $(cat "$WORK/nginx/error.log")"
    stop_server "$SERVE_PID" || failed ERRORS "serve: flagpole serve exited with status $? on SIGTERM"
    server_log_note serve "$WORK/serve.log"
    NOTES+=("serve: \`flagpole serve --log-level warning\` on a copy of the import row's database (plus a real app's file, $(basename "$REAL_FIXTURE")), and $(nginx -v 2>&1 | sed 's/^nginx version: //') (one worker process, sendfile, etag, no access log, flagpole's Cache-Control added) serving the bytes of \`flagpole export\` as files ($(IFS=/; echo "${sizes[*]}") bytes), after curl found the same bytes from both and a 304 from each for its own ETag. Each loaded by $(wrk -v 2>&1 | sed -n '1s/ \[.*//p' || true) for $HTTP_SECONDS s on 1 thread with $HTTP_CONNECTIONS connections, without and then with If-None-Match (bench.d/not_modified.lua); wrk and the server share the machine's $(nproc) cores. Target: flagpole's requests/s at least nginx's. flagpole's peak RSS: $peak MiB.")
}
