# Scripts/bench's "plan-rules" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

# Planning a rule change over the USERS users prepare_assignments recorded, each given attributes
# (a country of four, an app version of four), beside the sqlite3 shell counting the same movers.
bench_plan_rules() {
    local db="$WORK/plan-rules.sqlite" rules="$WORK/plan-rules.json" query="$WORK/plan-rules.sql" ours theirs
    fresh_copy "$db" "$WORK/assigned.sqlite"
    # Canonical JSON, as UserAttributes writes it: compact, keys in code-point order.
    sqlite3 -bail "$db" "INSERT INTO user_attributes (tenant_id, environment_id, user_id, attributes, fingerprint, seen_hour)
        SELECT tenant_id, environment_id, user_id,
            json_object('appVersion', '5.' || (CAST(substr(user_id, 6) AS INTEGER) % 4),
                        'country', substr('DEFRUSGB', (CAST(substr(user_id, 6) AS INTEGER) / 4 % 4) * 2 + 1, 2)),
            0, 0
        FROM assignments WHERE feature_id = $TEST_ID"
    checkpoint "$db"
    cat >"$rules" <<'JSON'
{"rules": [
  {"id": "germany-new", "clauses": [{"attribute": "country", "operator": "equals", "values": ["DE"]},
      {"attribute": "appVersion", "operator": "versionGreaterThanOrEqual", "values": ["5.2"]}], "serve": {"variation": "A"}},
  {"id": "anglo", "clauses": [{"attribute": "country", "operator": "in", "values": ["US", "GB"]}],
   "serve": {"split": [{"variation": "A", "weight": 30}, {"variation": "B", "weight": 70}]}}
]}
JSON
    # The same clauses in SQL (versions here are single digits, so text order is version order),
    # counting the users whose group they change, as the plan does.
    cat >"$query" <<SQL
SELECT count(*) FROM assignments a JOIN user_attributes u ON u.environment_id = a.environment_id AND u.user_id = a.user_id
WHERE a.feature_id = $TEST_ID AND a.is_override = 0 AND a.variation <> CASE
    WHEN json_extract(u.attributes, '\$.country') = 'DE' AND json_extract(u.attributes, '\$.appVersion') >= '5.2' THEN 'A'
    WHEN json_extract(u.attributes, '\$.country') IN ('US', 'GB') THEN CASE WHEN a.point < 30 THEN 'A' ELSE 'B' END
    ELSE a.variation END;
SQL
    ours=$("$FLAGPOLE" rule set "$TEST" --file "$rules" --dry-run --json --tenant "$TENANT" --db "$db" \
        | python3 -c 'import json, sys; print(json.load(sys.stdin)["plans"][0]["movingUsers"])')
    theirs=$(sqlite3 -bail "$db" <"$query")
    [ "$ours" = "$theirs" ] || failed "COUNTS DIFFER" "plan-rules: flagpole plans $ours users moving, the shell counts $theirs"
    time_pair plan-rules "" \
        "$(printf '%q rule set %q --file %q --dry-run --tenant %q --db %q > /dev/null' "$FLAGPOLE" "$TEST" "$rules" "$TENANT" "$db")" \
        "$(printf 'sqlite3 -bail %q < %q > /dev/null' "$db" "$query")" "$BULK_RUNS"
    report_row "plan a rule change ($(thousands "$ours") of $(thousands "$USERS") users with attributes move)" \
        "$FLAGPOLE_MS" "$BASELINE_MS" 2.0
    NOTES+=("plan-rules: \`flagpole rule set $TEST --file RULES --dry-run\` (two rules: a country and an app version, and a 30/70 split for two countries) on a copy of the assign row's database with every one of its $(thousands "$USERS") users given attributes (canonical JSON in user_attributes, written by the shell). Baseline: the sqlite3 shell's one query joining the same assignments with the same attribute rows and counting, with json_extract, the users the same clauses move. Both count $(thousands "$ours"); flagpole also reads every user's group and point, decodes each user's attributes and evaluates the rules in Swift, and builds the plan (pairs, examples, apps apart).")
}
