# Scripts/bench's "points" row: sourced by Scripts/bench, which sets the configuration and the
# shared helpers (bench.d/lib.sh, servers.sh, setup.sh) it uses.
# shellcheck shell=bash disable=SC2154

# Points per second on one core: the package's `points` benchmark, pinned to core 0.
bench_points() {
    local figures p50 rate
    figures=$(package_figure points points)
    read -r p50 _ <<<"$figures"
    rate=$(awk -v n="$POINTS" -v ms="$p50" 'BEGIN { printf "%.0f", n / (ms / 1000) }')
    report_limit_row "points per second, one core" "$(thousands "$rate") points/s" "–" "$rate" '>=' 20000000 \
        "≥ 20 000 000 points/s"
    NOTES+=("points: the Benchmarks package's \`points\`, $(thousands "$POINTS") points an iteration over ids built beforehand, $([ ${#PIN[@]} -gt 0 ] && echo "pinned to core 0" || echo "on any core"); the median iteration.")
}
