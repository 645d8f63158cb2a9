import Benchmark

/// Every benchmark of the package, registered by the code the benchmark plugin generates.
///
/// Sizes are small by default, so that `swift package --package-path Benchmarks benchmark` runs in
/// a minute or two; Scripts/bench sets the environment variables of `Inputs` for its sizes.
func benchmarks() {
    Benchmark.defaultConfiguration = .init(
        // Throughput is there for the JMH export Scripts/bench reads, which requires it.
        metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident],
        timeUnits: .microseconds,
        warmupIterations: 1,
        maxDuration: .seconds(10),
        maxIterations: Inputs.runs
    )
    coreBenchmarks()
    storeBenchmarks()
}
