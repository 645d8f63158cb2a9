# Scripts/bench's "package" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

# The package's other benchmarks: each a row of its median and p99, the in-process import beside
# the import row's baseline when it ran.
bench_package() {
    local name figures p50 p99 label baseline ratio
    for name in parse validate render import bias-plan import-plan; do
        figures=$(package_figure main "$name")
        read -r p50 p99 _ <<<"$figures"
        case $name in
            import) label="import in process ($FEATURES features, a fresh store each iteration)" ;;
            bias-plan) label="bias-plan: \`bias set --dry-run\` 10/90 → 20/80 over $(thousands "$USERS") users" ;;
            import-plan) label="import-plan: \`import --dry-run\` of the file with that change, over the same users" ;;
            *) label="$name ($FEATURES features)" ;;
        esac
        baseline="–" ratio="–"
        if [ "$name" = import ] && [ -n "$IMPORT_BASELINE_MS" ]; then
            baseline="$IMPORT_BASELINE_MS ms (the import row's)"
            ratio=$(awk -v f="$p50" -v b="$IMPORT_BASELINE_MS" 'BEGIN { printf "%.2f", f / b }')
        fi
        add_row "$label" "p50 $p50 ms, p99 $p99 ms" "$baseline" "$ratio" "reported" "–"
    done
    NOTES+=("package: the Benchmarks package (ordo-one/benchmark, in process, FlagpoleCore's and FlagpoleStore's public API) on the generated file and $(thousands "$USERS") users of $TEST: wall-clock percentiles of at most $RUNS iterations (10 s) each; import times the store's import alone, the store created before the clock starts; the plans are dry runs (nothing written). Their figures with allocations and peak memory: \`swift package --package-path Benchmarks benchmark\`.")
}
