# Scripts/bench's "export" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

bench_export() {
    # Exports only read, so they all run on the reference database, without a prepare step.
    local db="$WORK/imported.sqlite" baseline
    baseline=$(printf 'sqlite3 -bail %q < %q > %q' "$db" "$WORK/export.sql" "$WORK/timed-baseline.json")
    time_pair export "" \
        "$(printf '%q export --tenant %q --db %q > %q' "$FLAGPOLE" "$TENANT" "$db" "$WORK/timed.json")" \
        "$baseline"
    report_row "export ($FEATURES features)" "$FLAGPOLE_MS" "$BASELINE_MS" 2.0
    time_pair export-compact "" \
        "$(printf '%q export --compact --tenant %q --db %q > %q' "$FLAGPOLE" "$TENANT" "$db" "$WORK/timed-compact.json")" \
        "$baseline"
    report_row "export --compact ($FEATURES features)" "$FLAGPOLE_MS" "$BASELINE_MS" 2.0
}
