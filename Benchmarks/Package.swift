// swift-tools-version:6.1
import PackageDescription

// In-process benchmarks of Flagpole's libraries (ordo-one/benchmark), run by Scripts/bench
// or on their own with `swift package --package-path Benchmarks benchmark`. A package of their
// own so that the main package never builds them nor resolves the benchmark tool's
// dependencies: `swift build` and CI at the root stay as they were.
let package = Package(
    name: "flagpole-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // The Linux 6.3 ARC runtime interposer (a default trait) is left out: its package is
        // not needed for wall-clock and malloc figures.
        .package(url: "https://github.com/ordo-one/benchmark.git", exact: "1.38.1", traits: ["MallocInterposer"]),
        // Flagpole itself: its public API only (FlagpoleCore, FlagpoleStore).
        .package(name: "flagpole", path: ".."),
    ],
    targets: [
        .executableTarget(
            name: "FlagpoleBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "FlagpoleCore", package: "flagpole"),
                .product(name: "FlagpoleStore", package: "flagpole"),
            ],
            path: "Benchmarks/FlagpoleBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ],
    swiftLanguageModes: [.v6]
)
