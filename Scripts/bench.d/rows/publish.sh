# Scripts/bench's "publish" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

# `flagpole publish` of PUBLISH_ENVS environments to moto's S3 server, beside `aws s3 sync` of the
# same `flagpole export --all` tree, both through one counting proxy (bench.d/publish.py): the
# first publish, one with nothing changed, and one after a single environment changed.
bench_publish() {
    local db="$WORK/publish.sqlite" result
    log "Making $(thousands "$PUBLISH_ENVS") environments to publish"
    python3 "$HELPERS/publish.py" prepare "$FLAGPOLE" "$db" "$PUBLISH_ENVS" "$REAL_FIXTURE" || die "publish: preparing failed"
    sed -e 's/"test-biases": \[50, 50\]/"test-biases": [30, 70]/' "$REAL_FIXTURE" >"$WORK/publish-change.json"
    log "Publishing, and syncing with aws s3 sync"
    result=$(python3 "$HELPERS/publish.py" "$FLAGPOLE" "$db" "$WORK" "$WORK/publish-change.json") || die "publish: $result"
    local step field
    declare -A figure
    for step in first unchanged oneChanged; do
        for field in flagpole.seconds flagpole.requests flagpole.objects aws.seconds aws.requests aws.exportSeconds; do
            figure[$step.$field]=$(python3 -c 'import json, sys; r = json.loads(sys.argv[1]); a, b, c = sys.argv[2].split("."); print(r[a][b].get(c, ""))' "$result" "$step.$field")
        done
        figure[$step.puts]=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]]["flagpole"]["byMethod"].get("PUT", 0))' "$result" "$step")
    done
    local only
    only=$(python3 -c 'import json, sys; print(int(json.loads(sys.argv[1])["oneChanged"]["flagpole"]["onlyThatEnvironment"]))' "$result")
    local ms_f ms_a
    ms_f=$(awk -v s="${figure[first.flagpole.seconds]}" 'BEGIN { print s * 1000 }')
    ms_a=$(awk -v s="${figure[first.aws.seconds]}" 'BEGIN { print s * 1000 }')
    report_row "publish $(thousands "$PUBLISH_ENVS") changed environments ($(thousands "${figure[first.flagpole.objects]}") objects) vs aws s3 sync of the export tree" "$ms_f" "$ms_a" 1.0
    report_limit_row "requests of that publish (each object once, manifest last)" \
        "$(thousands "${figure[first.flagpole.requests]}") requests, $(awk -v r="${figure[first.flagpole.requests]}" -v s="${figure[first.flagpole.seconds]}" 'BEGIN { printf "%.0f", r / s }') req/s" \
        "$(thousands "${figure[first.aws.requests]}") requests, $(awk -v r="${figure[first.aws.requests]}" -v s="${figure[first.aws.seconds]}" 'BEGIN { printf "%.0f", r / s }') req/s" \
        "$(( ${figure[first.flagpole.requests]} - ${figure[first.aws.requests]} ))" '<=' 0 "≤ aws s3 sync's"
    report_limit_row "publish again, nothing changed" \
        "${figure[unchanged.puts]} PUTs, ${figure[unchanged.flagpole.requests]} requests, ${figure[unchanged.flagpole.seconds]} s" \
        "aws s3 sync: ${figure[unchanged.aws.requests]} requests, ${figure[unchanged.aws.seconds]} s" \
        "${figure[unchanged.puts]}" '<=' 0 "zero PUTs"
    report_limit_row "publish after one environment changed" \
        "${figure[oneChanged.puts]} PUTs (its changed objects and the manifest), ${figure[oneChanged.flagpole.requests]} requests, ${figure[oneChanged.flagpole.seconds]} s" \
        "aws s3 sync: ${figure[oneChanged.aws.requests]} requests, ${figure[oneChanged.aws.seconds]} s (after export --all: ${figure[oneChanged.aws.exportSeconds]} s)" \
        "$only" '>=' 1 "only that environment"
    NOTES+=("publish: $(thousands "$PUBLISH_ENVS") environments of tenant pub, each the serve row's real document plus a feature of its own (made through the admin API). moto's S3 server (python3 -m moto.server, one process) behind bench.d/publish.py's counting proxy; \`flagpole publish --to s3://bench/flagpole\` (16 requests in flight) and \`aws s3 sync\` (awscli $(aws --version 2>&1 | cut -d' ' -f1 | cut -d/ -f2), 10 in flight) of \`flagpole export --all\`'s tree to s3://bench/sync, with the same credentials. One server in one Python process bounds both, so the time ratio compares the clients' overheads; requests are counted at the proxy. The tree holds the same objects as the bucket; aws s3 sync lists before uploading and sets neither Content-Encoding on the gzip twins nor the order. Figures: $result")
}
