import FlagpoleCore
import Testing

/// FORMAT.md §4: which biases the client keeps, and the warnings W200–W204.
@Suite("Biases (FORMAT §4)")
struct BiasTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var members: String
        var reading: BiasReading
        /// The biases the client buckets with.
        var biases: [Double]
        /// The share of users each variation really gets.
        var shares: [Double]
        var warnings: [DiagnosticCode] = []

        var testDescription: String { members }
    }

    static let third = 100.0 / 3

    static let cases: [Case] = [
        // Kept: the count matches and the clamped running sum reaches 100.
        Case(
            members: #""test-variations": ["A", "B"], "test-biases": [50, 50]"#,
            reading: .accepted, biases: [50, 50], shares: [50, 50]),
        Case(
            members: #""test-variations": ["A", "B"], "test-biases": [90, 10]"#,
            reading: .accepted, biases: [90, 10], shares: [90, 10]),
        Case(
            members: #""test-variations": ["A", "B"], "test-biases": [0, 100]"#,
            reading: .accepted, biases: [0, 100], shares: [0, 100]),
        Case(
            members: #""test-variations": ["A", "B"], "test-biases": [100, 0]"#,
            reading: .accepted, biases: [100, 0], shares: [100, 0]),
        Case(
            members: #""test-variations": ["A", "B"], "test-biases": [50.5, 49.5]"#,
            reading: .accepted, biases: [50.5, 49.5], shares: [50.5, 49.5]),
        Case(
            members: #""test-variations": ["A", "B", "C"], "test-biases": [33.3, 33.3, 33.4]"#,
            reading: .accepted, biases: [33.3, 33.3, 33.4], shares: [33.3, 33.3, 33.4]),
        Case(
            members: #""test-variations": ["A", "B", "C"], "test-biases": [70, 20, 10]"#,
            reading: .accepted, biases: [70, 20, 10], shares: [70, 20, 10]),
        // One variation: two stored variations, so two biases are kept.
        Case(
            members: #""test-variations": ["X"], "test-biases": [70, 30]"#,
            reading: .accepted, biases: [70, 30], shares: [70, 30], warnings: [.singleVariation]),
        // Sums under 100: an equal split (W201).
        Case(
            members: #""test-variations": ["A", "B"], "test-biases": [50, 49]"#,
            reading: .sumShort(sum: 99), biases: [50, 50], shares: [50, 50], warnings: [.biasSumShort]),
        Case(
            members: #""test-variations": ["A", "B", "C"], "test-biases": [33.3, 33.3, 33.3]"#,
            reading: .sumShort(sum: 33.3 + 33.3 + 33.3), biases: [third, third, third], shares: [third, third, third],
            warnings: [.biasSumShort]),
        Case(
            members: #""test-variations": ["A", "B"], "test-biases": [0, 0]"#,
            reading: .sumShort(sum: 0), biases: [50, 50], shares: [50, 50], warnings: [.biasSumShort]),
        Case(
            members: #""test-variations": ["A", "B", "C", "D"], "test-biases": [25, 25, 25, 24.999999]"#,
            reading: .sumShort(sum: 99.999999), biases: [25, 25, 25, 25], shares: [25, 25, 25, 25],
            warnings: [.biasSumShort]),
        // Count mismatches: an equal split (W200).
        Case(
            members: #""test-variations": ["A", "B"], "test-biases": [100]"#,
            reading: .countMismatch(expected: 2), biases: [50, 50], shares: [50, 50], warnings: [.biasCountMismatch]),
        Case(
            members: #""test-variations": ["A", "B"], "test-biases": [30, 30, 40]"#,
            reading: .countMismatch(expected: 2), biases: [50, 50], shares: [50, 50], warnings: [.biasCountMismatch]),
        Case(
            members: #""test-variations": ["A", "B"], "test-biases": []"#,
            reading: .countMismatch(expected: 2), biases: [50, 50], shares: [50, 50], warnings: [.biasCountMismatch]),
        Case(
            members: #""test-variations": ["A", "B", "C"], "test-biases": [50, 50]"#,
            reading: .countMismatch(expected: 3), biases: [third, third, third], shares: [third, third, third],
            warnings: [.biasCountMismatch]),
        Case(
            members: #""test-variations": ["X"], "test-biases": [100]"#,
            reading: .countMismatch(expected: 2), biases: [50, 50], shares: [50, 50],
            warnings: [.biasCountMismatch, .singleVariation]),
        // Sums over 100: kept as written; later groups shrink or vanish (W202).
        Case(
            members: #""test-variations": ["A", "B"], "test-biases": [60, 60]"#,
            reading: .accepted, biases: [60, 60], shares: [60, 40], warnings: [.biasSumOver]),
        Case(
            members: #""test-variations": ["A", "B", "C"], "test-biases": [50, 50, 50]"#,
            reading: .accepted, biases: [50, 50, 50], shares: [50, 50, 0], warnings: [.biasSumOver]),
        Case(
            members: #""test-variations": ["A", "B", "C"], "test-biases": [40, 40, 40]"#,
            reading: .accepted, biases: [40, 40, 40], shares: [40, 40, 20], warnings: [.biasSumOver]),
        // Each value clamped to 0…100 (W203), then read as above.
        Case(
            members: #""test-variations": ["A", "B"], "test-biases": [-10, 110]"#,
            reading: .accepted, biases: [0, 100], shares: [0, 100], warnings: [.biasClamped, .biasClamped]),
        Case(
            members: #""test-variations": ["A", "B"], "test-biases": [150, 0]"#,
            reading: .accepted, biases: [100, 0], shares: [100, 0], warnings: [.biasClamped]),
        Case(
            members: #""test-variations": ["A", "B"], "test-biases": [-20, 90]"#,
            reading: .sumShort(sum: 90), biases: [50, 50], shares: [50, 50], warnings: [.biasClamped, .biasSumShort]),
        Case(
            members: #""test-variations": ["A", "B", "C"], "test-biases": [120, 10, 10]"#,
            reading: .accepted, biases: [100, 10, 10], shares: [100, 0, 0],
            warnings: [.biasClamped, .biasSumOver]),
    ]

    @Test("The client keeps, splits or clamps biases as FORMAT §4 says", arguments: cases)
    func reading(of testCase: Case) throws {
        let decoded = TestSupport.decode(TestSupport.document(feature: testCase.members))
        #expect(decoded.isValid)
        let feature = try #require(decoded.document?.features.only)
        switch (feature.biasReading, testCase.reading) {
        case (.sumShort(let actual), .sumShort(let expected)):
            #expect(TestSupport.isClose(actual, expected), "sum \(actual), expected \(expected)")
        default:
            #expect(feature.biasReading == testCase.reading)
        }
        #expect(TestSupport.isClose(feature.effectiveBiases, testCase.biases), "\(feature.effectiveBiases)")
        #expect(TestSupport.isClose(feature.effectiveShares, testCase.shares), "\(feature.effectiveShares)")
        #expect(TestSupport.isClose(feature.effectiveShares.reduce(0, +), 100))
        #expect(decoded.diagnostics.map(\.code).sorted() == testCase.warnings.sorted())
    }

    @Test("The written biases are kept as written, even when the client ignores them")
    func writtenBiasesKept() throws {
        let feature = try TestSupport.onlyFeature(#""test-variations": ["A", "B"], "test-biases": [-20, 90]"#)
        #expect(feature.testBiases == [-20, 90])
    }

    @Test(
        "The running sum clamps each value and the total, in IEEE doubles",
        arguments: [([Double], Double)]([
            ([50.0, 50], 100.0), ([60, 60], 100), ([50, 49], 99), ([-10, 50], 50), ([200], 100), ([100, -50], 100),
            ([33.3, 33.3, 33.4], 100), ([], 0),
        ]))
    func clampedRunningSum(biases: [Double], sum: Double) {
        #expect(Feature.clampedRunningSum(biases) == sum)
    }

    @Test(
        "A percentage is clamped to 0…100",
        arguments: [
            (-5.0, 0.0), (0, 0), (42.5, 42.5), (100, 100), (100.5, 100), (1e9, 100), (-0.001, 0),
        ])
    func clampedPercentage(value: Double, clamped: Double) {
        #expect(Feature.clampedPercentage(value) == clamped)
    }

    @Test(
        "Biases on a plain flag have no effect (W204)",
        arguments: [
            Input(#""test-biases": [50, 50]"#),
            Input(#""enabled": true, "test-biases": [10, 90]"#),
            Input(#""test-variations": [], "test-biases": [50, 50]"#),
            Input(#""test-variations": null, "test-biases": [30, 70]"#),
        ])
    func biasesOnPlainFlag(input: Input) throws {
        let (decoded, marks) = TestSupport.decodeMarked(
            TestSupport.document(
                feature: input.text.replacingOccurrences(of: #""test-biases": "#, with: #""test-biases": ‸"#)))
        #expect(decoded.isValid)
        let diagnostic = try #require(decoded.diagnostics.only)
        #expect(diagnostic.code == .biasesOnPlainFlag)
        #expect(diagnostic.severity == .warning)
        #expect(diagnostic.pointer.description == "/features/0/test-biases")
        #expect(diagnostic.location == marks.first)
        #expect(diagnostic.feature == "f")
        let feature = try #require(decoded.document?.features.only)
        #expect(feature.kind == .flag)
    }

    @Test("A plain flag with a bias count that does not fit still reports W204")
    func biasesOnPlainFlagMismatch() throws {
        let decoded = TestSupport.decode(TestSupport.document(feature: #""enabled": true, "test-biases": [100]"#))
        #expect(decoded.isValid)
        #expect(decoded.diagnostics.map(\.code).contains(.biasesOnPlainFlag))
    }

    @Test("Bias warnings point at the array, clamping at the element")
    func biasWarningLocations() throws {
        let (decoded, marks) = TestSupport.decodeMarked(
            #"""
            {"features": [
                {"name": "short", "test-variations": ["A", "B"], "test-biases": ‸[50, 49]},
                {"name": "count", "test-variations": ["A", "B", "C"], "test-biases": ‸[50, 50]},
                {"name": "over", "test-variations": ["A", "B"], "test-biases": ‸[60, 60]},
                {"name": "clamped", "test-variations": ["A", "B"], "test-biases": [‸-5, ‸105]}
            ]}
            """#)
        #expect(decoded.isValid)
        let expected: [(DiagnosticCode, String, String)] = [
            (.biasSumShort, "short", "/features/0/test-biases"),
            (.biasCountMismatch, "count", "/features/1/test-biases"),
            (.biasSumOver, "over", "/features/2/test-biases"),
            (.biasClamped, "clamped", "/features/3/test-biases/0"),
            (.biasClamped, "clamped", "/features/3/test-biases/1"),
        ]
        try #require(decoded.diagnostics.count == expected.count)
        for (diagnostic, (expected, mark)) in zip(decoded.diagnostics, zip(expected, marks)) {
            #expect(diagnostic.code == expected.0)
            #expect(diagnostic.feature == expected.1)
            #expect(diagnostic.pointer.description == expected.2)
            #expect(diagnostic.location == mark, "\(diagnostic.code)")
            #expect(!diagnostic.message.isEmpty && !diagnostic.fix.isEmpty)
        }
    }

    // MARK: labels

    @Test(
        "A labels count that differs from the variations' is W210",
        arguments: [
            (#""test-variations": ["A", "B", "C"], "labels": ["a", "b"]"#, true),
            (#""test-variations": ["A", "B"], "labels": ["a", "b", "c"]"#, true),
            (#""test-variations": ["A", "B"], "labels": []"#, true),
            (#""labels": ["only"]"#, true),
            (#""test-variations": ["A", "B"], "labels": ["a", "b"]"#, false),
            (#""test-variations": ["A", "B"], "labels": [null, null]"#, false),
            (#""test-variations": ["A", "B", "C"], "labels": ["a", null, "c"]"#, false),
            (#""labels": ["on", "off"]"#, false),
        ])
    func labelCount(members: String, isWarned: Bool) throws {
        let (decoded, marks) = TestSupport.decodeMarked(
            TestSupport.document(feature: members.replacingOccurrences(of: #""labels": "#, with: #""labels": ‸"#)))
        #expect(decoded.isValid)
        if isWarned {
            let diagnostic = try #require(decoded.diagnostics.only)
            #expect(diagnostic.code == .labelCountMismatch)
            #expect(diagnostic.pointer.description == "/features/0/labels")
            #expect(diagnostic.location == marks.first)
        } else {
            #expect(decoded.diagnostics.isEmpty)
        }
    }

    // MARK: duplicate names

    @Test("A duplicate name is W220 on the later feature, and only the first is kept")
    func duplicateNames() throws {
        let (decoded, marks) = TestSupport.decodeMarked(
            #"""
            {"features": [
                {"name": "Dup", "enabled": true},
                {"name": "dup"},
                ‸{"name": "Dup", "enabled": false, "description": "second"},
                {"name": "Other"},
                ‸{"name": "Dup", "description": "third"}
            ]}
            """#)
        #expect(decoded.isValid)
        #expect(decoded.diagnostics.map(\.code) == [.duplicateName, .duplicateName])
        #expect(decoded.diagnostics.map(\.pointer.description) == ["/features/2", "/features/4"])
        #expect(decoded.diagnostics.map(\.feature) == ["Dup", "Dup"])
        #expect(decoded.diagnostics.map(\.location) == marks.map(Optional.some))
        #expect(decoded.diagnostics.allSatisfy { $0.severity == .warning })
        let document = try #require(decoded.document)
        #expect(document.features.map(\.name) == ["Dup", "dup", "Other"])
        #expect(document.feature(named: "Dup")?.enabled == true)
        #expect(document.feature(named: "Dup")?.description == nil)
    }

    @Test("Empty names can be duplicates too")
    func duplicateEmptyNames() throws {
        let decoded = TestSupport.decode(#"[{"name": ""}, {"name": "", "enabled": true}]"#)
        #expect(decoded.diagnostics.map(\.code) == [.duplicateName])
        #expect(decoded.document?.features.count == 1)
    }
}
