import Benchmark
import FlagpoleCore

/// FlagpoleCore's work on one features file, and the points users are bucketed by.
func coreBenchmarks() {
    // Each iteration computes FLAGPOLE_BENCH_POINTS points over ids built beforehand, as a users
    // file would give them: only the points are timed (points/s = points / wall-clock time).
    Benchmark("points", configuration: .init(maxIterations: min(Inputs.runs, 5))) { benchmark, users in
        let points = UserPoints(salt: "40a05e6457ef4bfc88eec2df806d21fc")
        var checksum = 0.0
        for index in 0..<Inputs.pointsPerIteration {
            checksum += points.point(for: users[index % users.count])
        }
        blackHole(checksum)
    } setup: {
        (0..<min(Inputs.pointsPerIteration, 1_000_000)).map { "user-\($0)" }
    }

    // The JSON parser alone: bytes to a tree of nodes with their offsets.
    Benchmark("parse") { _, bytes in
        blackHole(try JSONParser.parse(bytes))
    } setup: {
        try Inputs.featuresFile()
    }

    // The client's reading of the file: parse, decode and lint, with every diagnostic located.
    Benchmark("validate") { _, bytes in
        let decoded = DocumentDecoder.decode(bytes)
        precondition(decoded.isValid, "the features file has errors")
        blackHole(decoded)
    } setup: {
        try Inputs.featuresFile()
    }

    // The export's bytes of the decoded document (4-space layout), as a revision stores them.
    Benchmark("render") { _, document in
        blackHole(document.rendered())
    } setup: {
        try Inputs.document(try Inputs.featuresFile())
    }
}
