import FlagpoleCore
import Testing

/// docs/ARCHITECTURE.md ("Bucketing") and docs/FORMAT.md §5: the stable hash, users' points, the range a point
/// falls into, the group the store records, user ids and the pinned per-user document.
@Suite("Bucketing (DESIGN §Bucketing, FORMAT §5)")
struct BucketingTests {
    // MARK: Murmur3

    struct HashVector: Sendable, CustomTestStringConvertible {
        var text: String
        var seed: UInt32
        var hash: UInt32

        var testDescription: String { "\"\(text)\" (\(text.utf8.count) bytes), seed \(seed)" }
    }

    /// The first three are those docs/ARCHITECTURE.md quotes. The others were computed outside the repository with
    /// a hand-written Python MurmurHash3_x86_32 and checked against the `mmh3` package
    /// (5.3.1, `mmh3.hash(data, seed, signed=False)`), which agreed on every one.
    static let hashVectors: [HashVector] = [
        HashVector(text: "", seed: 0, hash: 0x0000_0000),
        HashVector(text: "hello", seed: 0, hash: 0x248b_fa47),
        HashVector(text: "The quick brown fox jumps over the lazy dog", seed: 0, hash: 0x2e4f_f723),
        // Every tail length (0–3 bytes after the whole blocks), with zero, one and two blocks.
        HashVector(text: "a", seed: 0, hash: 0x3c25_69b2),
        HashVector(text: "ab", seed: 0, hash: 0x9bbf_d75f),
        HashVector(text: "abc", seed: 0, hash: 0xb3dd_93fa),
        HashVector(text: "abcd", seed: 0, hash: 0x43ed_676a),
        HashVector(text: "abcde", seed: 0, hash: 0xe89b_9af6),
        HashVector(text: "abcdefg", seed: 0, hash: 0x883c_9b06),
        HashVector(text: "abcdefgh", seed: 0, hash: 0x49dd_ccc4),
        HashVector(text: "abcdefghi", seed: 0, hash: 0x4214_06f0),
        // Non-ASCII: bytes with the high bit set, in blocks and in the tail.
        HashVector(text: "héllo wörld", seed: 0, hash: 0x97f7_f274),
        HashVector(text: "日本語", seed: 0, hash: 0xa5a4_7297),
        HashVector(text: "🚩", seed: 0, hash: 0x6c20_f9a7),
        // Non-zero seeds.
        HashVector(text: "", seed: 1, hash: 0x514e_28b7),
        HashVector(text: "", seed: 0xffff_ffff, hash: 0x81f1_6f39),
        HashVector(text: "hello", seed: 1, hash: 0xbb4a_bcad),
        HashVector(text: "hello", seed: 0x9747_b28c, hash: 0x5d7f_56e8),
        HashVector(text: "The quick brown fox jumps over the lazy dog", seed: 0x9747_b28c, hash: 0x2fa8_26cd),
    ]

    @Test("MurmurHash3 x86_32 matches the reference", arguments: hashVectors)
    func murmur3(vector: HashVector) {
        #expect(Murmur3.hash32(Array(vector.text.utf8), seed: vector.seed) == vector.hash)
        // Any sequence of bytes, not only arrays.
        #expect(Murmur3.hash32(vector.text.utf8, seed: vector.seed) == vector.hash)
    }

    @Test("The seed defaults to 0")
    func murmur3DefaultSeed() {
        #expect(Murmur3.hash32(Array("hello".utf8)) == 0x248b_fa47)
    }

    /// Computed the same way as `hashVectors`.
    static let byteVectors: [([UInt8], UInt32)] = [
        ([0xff], 0xfd6c_f10d),
        ([0x80, 0x81, 0x82], 0x7508_a955),
        ((0...255).map { UInt8($0) }, 0xe40a_0e56),
    ]

    @Test("MurmurHash3 of raw bytes: high bytes in the tail, and 256 bytes", arguments: byteVectors)
    func murmur3Bytes(bytes: [UInt8], hash: UInt32) {
        #expect(Murmur3.hash32(bytes) == hash)
        // A slice that starts off a 4-byte boundary hashes the same.
        let shifted = [0x00] + bytes
        #expect(Murmur3.hash32(shifted.dropFirst()) == hash)
    }

    // MARK: User points

    /// Salts leaving 0, 1, 2 and 3 bytes of `salt + ":"` after its whole blocks.
    static let salts = ["abc", "日", "", "abcd", "Zx81kQ0pLm3Nv7Rt", "x", "abcde", "ab", "é", "s4lt-6"]

    /// Users of 0 to 9 bytes, and non-ASCII ones.
    static let users = [
        "", "a", "ab", "abc", "abcd", "abcde", "abcdef", "abcdefg", "abcdefgh", "abcdefghi",
        "é", "日本語", "🚩", "zoë-42", "user 7", "Ünïcødé-user-ßß",
    ]

    /// docs/ARCHITECTURE.md's formula, written out with the plain hash.
    static func referencePoint(salt: String, user: String) -> Double {
        Double(Murmur3.hash32(Array((salt + ":" + user).utf8))) / 4_294_967_296 * 100
    }

    @Test("A point is murmur3(utf8(salt + \":\" + user)) / 2^32 * 100", arguments: salts, users)
    func point(salt: String, user: String) {
        let expected = Self.referencePoint(salt: salt, user: user)
        let points = UserPoints(salt: salt)
        #expect(points.point(for: user) == expected)
        #expect(points.salt == salt)
        #expect(expected >= 0 && expected < 100)
    }

    @Test("The UTF-8 entry point agrees, even for bytes that start off a 4-byte boundary", arguments: salts, users)
    func pointForUTF8(salt: String, user: String) {
        let points = UserPoints(salt: salt)
        let expected = Self.referencePoint(salt: salt, user: user)
        let shifted = Array(("-" + user).utf8)
        let actual = shifted.withUnsafeBytes { points.point(forUTF8: UnsafeRawBufferPointer(rebasing: $0[1...])) }
        #expect(actual == expected)
    }

    /// Computed with Python's `mmh3` (see `hashVectors`): `h / 4294967296 * 100`.
    @Test(
        "Golden points",
        arguments: [
            ("s4lt", "alice", 78.44424713402987),
            ("k9x2vq", "user-42", 51.54927393887192),
            ("", "", 16.85548177920282),
        ])
    func goldenPoint(salt: String, user: String, point: Double) {
        #expect(UserPoints(salt: salt).point(for: user) == point)
    }

    @Test("Points lie in [0, 100): the extreme hashes")
    func pointBounds() {
        #expect(UserPoints.point(hash: 0) == 0)
        #expect(UserPoints.point(hash: .max) < 100)
        #expect(UserPoints.point(hash: .max) > 99.999_999)
        #expect(UserPoints.point(hash: 1 << 31) == 50)
    }

    @Test("Different salts split the same users differently")
    func saltsMatter() {
        let users = (0..<100).map { "user-\($0)" }
        let first = users.map(UserPoints(salt: "alpha").point(for:))
        let second = users.map(UserPoints(salt: "beta").point(for:))
        #expect(first != second)
        #expect(Set(first).count == users.count)
    }

    @Test("100 000 users spread evenly: every decile holds 9 % to 11 %")
    func uniformSpread() {
        let points = UserPoints(salt: "spread-check")
        var deciles = [Int](repeating: 0, count: 10)
        var outside: [String] = []
        for index in 0..<100_000 {
            let point = points.point(for: "user-\(index)")
            if point < 0 || point >= 100 { outside.append("user-\(index): \(point)") }
            deciles[min(max(Int(point / 10), 0), 9)] += 1
        }
        #expect(outside.isEmpty)
        #expect(deciles.allSatisfy { (9_000...11_000).contains($0) }, "\(deciles)")
    }

    // MARK: Range lookup

    struct Lookup: Sendable, CustomTestStringConvertible {
        var biases: [Double]
        var point: Double
        var index: Int

        var testDescription: String { "\(biases) at \(point) → \(index)" }
    }

    static let lookups: [Lookup] = [
        Lookup(biases: [20, 30, 50], point: 0, index: 0),
        Lookup(biases: [20, 30, 50], point: 19.999, index: 0),
        Lookup(biases: [20, 30, 50], point: 20.nextDown, index: 0),
        // Exactly at a bound: the upper range.
        Lookup(biases: [20, 30, 50], point: 20, index: 1),
        Lookup(biases: [20, 30, 50], point: 50.nextDown, index: 1),
        Lookup(biases: [20, 30, 50], point: 50, index: 2),
        Lookup(biases: [20, 30, 50], point: 100.nextDown, index: 2),
        // Zero-width ranges own nothing, wherever they sit.
        Lookup(biases: [0, 100, 0], point: 0, index: 1),
        Lookup(biases: [0, 100, 0], point: 100.nextDown, index: 1),
        Lookup(biases: [0, 0, 100], point: 0, index: 2),
        Lookup(biases: [50, 0, 50], point: 50, index: 2),
        Lookup(biases: [100, 0], point: 100.nextDown, index: 0),
        Lookup(biases: [50, 50, 50], point: 100.nextDown, index: 1),
        Lookup(biases: [60, 60], point: 60, index: 1),
    ]

    @Test("A point belongs to the first range whose upper bound is above it", arguments: lookups)
    func indexContaining(lookup: Lookup) {
        let ranges = VariationRanges(names: lookup.biases.indices.map { "V\($0)" }, biases: lookup.biases)
        #expect(ranges.index(containing: lookup.point) == lookup.index)
    }

    @Test("No ranges, no index")
    func indexWithoutRanges() {
        #expect(VariationRanges(names: [], biases: []).index(containing: 50) == nil)
    }

    /// Equal splits whose running sum rounds below 100 (100/n added n times).
    static let shortSplits = [12, 14, 17]

    @Test("The last range takes everything up to 100 when an equal split sums just under it", arguments: shortSplits)
    func lastRangeClosedAtHundred(count: Int) throws {
        let feature = Feature(name: "f", testVariations: (0..<count).map { "V\($0)" })
        let ranges = VariationRanges(of: feature)
        let last = try #require(ranges.ranges.last)
        try #require(last.upper < 100, "the split must sum under 100 for this test to mean anything")
        #expect(ranges.index(containing: last.upper) == count - 1)
        #expect(ranges.index(containing: 100.nextDown) == count - 1)
        #expect(ranges.bounds(of: count - 1).upper == 100)
        #expect(ranges.bounds(of: count - 1).lower == last.lower)
        #expect(feature.variation(at: 100.nextDown) == "V\(count - 1)")
    }

    static let rangeSets: [[Double]] = [
        [20, 30, 50], [10, 90], [0, 100, 0], [0, 0, 100], [100, 0, 0], [50, 0, 50], [60, 60], [50, 50, 50],
        [40, 40, 40], [33.3, 33.3, 33.4], Array(repeating: 100.0 / 17, count: 17),
        Array(repeating: 100.0 / 3, count: 3),
    ]

    @Test(
        "Every point lies within the bounds of its range, so zero-width ranges are never chosen", arguments: rangeSets)
    func boundsAgreeWithLookup(biases: [Double]) throws {
        let ranges = VariationRanges(names: biases.indices.map { "V\($0)" }, biases: biases)
        var points = stride(from: 0.0, to: 100, by: 0.25).map { $0 }
        for range in ranges.ranges {
            points += [range.lower, range.upper, range.lower.nextDown, range.upper.nextDown].filter {
                $0 >= 0 && $0 < 100
            }
        }
        points.append(100.nextDown)
        for point in points {
            let index = try #require(ranges.index(containing: point))
            let (lower, upper) = ranges.bounds(of: index)
            #expect(lower <= point && point < upper, "\(point) in range \(index) [\(lower), \(upper))")
            #expect(ranges.ranges[index].width > 0, "\(point) chose a zero-width range \(index)")
        }
    }

    @Test("bounds(of:) are the range's own, but the last one ends at 100")
    func bounds() {
        let ranges = VariationRanges(names: ["A", "B", "C"], biases: [20, 30, 50])
        #expect(ranges.bounds(of: 0) == (0, 20))
        #expect(ranges.bounds(of: 1) == (20, 50))
        #expect(ranges.bounds(of: 2) == (50, 100))
        let cut = VariationRanges(names: ["A", "B", "C"], biases: [50, 50, 50])
        #expect(cut.bounds(of: 2) == (100, 100))
    }

    struct Preference: Sendable, CustomTestStringConvertible {
        var names: [String]
        var biases: [Double]
        var variation: String
        var preferring: Double
        var point: Double?
        var label: String

        var testDescription: String { label }
    }

    static let preferences: [Preference] = [
        Preference(
            names: ["A", "B", "C"], biases: [20, 30, 50], variation: "B", preferring: 25, point: 25,
            label: "the preferred point when it already lands there"),
        Preference(
            names: ["A", "B", "C"], biases: [20, 30, 50], variation: "b", preferring: 25, point: 25,
            label: "names compare case-insensitively"),
        Preference(
            names: ["A", "B", "C"], biases: [20, 30, 50], variation: "B", preferring: 10, point: 35,
            label: "else the middle of the variation's range"),
        Preference(
            names: ["A", "B", "C"], biases: [20, 30, 50], variation: "c", preferring: 10, point: 75,
            label: "the middle of the last range, case-insensitively"),
        Preference(
            names: ["A", "B", "C"], biases: [20, 30, 50], variation: "A", preferring: 20, point: 10,
            label: "a point on a bound belongs to the upper range"),
        Preference(
            names: ["A", "B", "C"], biases: [20, 30, 50], variation: "D", preferring: 10, point: nil,
            label: "an unknown variation has no point"),
        Preference(
            names: ["A", "B", "C"], biases: [50, 50, 50], variation: "C", preferring: 10, point: nil,
            label: "a zero-width variation has no point"),
        Preference(
            names: ["A", "B", "C"], biases: [50, 50, 50], variation: "C", preferring: 99.9, point: nil,
            label: "a zero-width variation has no point, even preferring one near it"),
        Preference(
            names: ["A", "B"], biases: [100, 0], variation: "B", preferring: 100.nextDown, point: nil,
            label: "a zero-width last variation has no point"),
        Preference(
            names: ["A", "B", "A"], biases: [0, 50, 50], variation: "a", preferring: 10, point: 75,
            label: "the first range of the name that owns any point"),
        Preference(
            names: ["A", "B", "a"], biases: [30, 30, 40], variation: "A", preferring: 80, point: 80,
            label: "any range of the name keeps the preferred point"),
    ]

    @Test("point(in:preferring:)", arguments: preferences)
    func pointInVariation(preference: Preference) throws {
        let ranges = VariationRanges(names: preference.names, biases: preference.biases)
        let point = ranges.point(in: preference.variation, preferring: preference.preferring)
        #expect(point == preference.point)
        if let point {
            let index = try #require(ranges.index(containing: point))
            #expect(ranges.ranges[index].name.lowercased() == preference.variation.lowercased())
        }
    }

    @Test(
        "point(in:preferring:) always lands in the variation, for every variation and preference", arguments: rangeSets)
    func pointInVariationLands(biases: [Double]) throws {
        let ranges = VariationRanges(names: biases.indices.map { "V\($0)" }, biases: biases)
        for index in ranges.ranges.indices {
            for preferring in [0, 12.5, 50, 99.9, 100.nextDown] {
                let (lower, upper) = ranges.bounds(of: index)
                let point = ranges.point(in: "v\(index)", preferring: preferring)
                if lower < upper {
                    let found = try #require(point, "V\(index) owns [\(lower), \(upper))")
                    #expect(ranges.index(containing: found) == index)
                } else {
                    #expect(point == nil)
                }
            }
        }
    }

    // MARK: Assignment

    @Test(
        "Only tests are bucketed",
        arguments: [
            (Input(""), false),
            (Input(#""enabled": true"#), false),
            (Input(#""development": true, "enabled": true"#), false),
            (Input(#""unlocked": false, "enabled": true"#), false),
            (Input(#""test-variations": ["X"]"#), false),
            (Input(#""test-variations": ["A", "B"]"#), true),
            (Input(#""test-variations": ["Enabled", "Disabled"]"#), true),
            (Input(#""test-variations": ["A", "B", "C"]"#), true),
            (Input(#""test-variations": ["X"], "type": {"feature-test": "ab"}"#), true),
            // A test declared by its type alone: the client gives every device point 1 or 99.
            (Input(#""type": {"feature-test": "mvt"}"#), false),
            (Input(#""type": {"feature-test": "mvt"}, "enabled": true"#), false),
        ])
    func isBucketed(input: Input, isBucketed: Bool) throws {
        let feature = try TestSupport.onlyFeature(input.text)
        #expect(feature.isBucketed == isBucketed)
    }

    /// Points at every kind of boundary, and the extremes.
    static let samplePoints: [Double] = [0, 1, 9.99, 10, 33.4, 50, 50.nextDown, 60, 66.7, 90, 99, 99.99, 100.nextDown]

    @Test(
        "A disabled feature puts everyone in Disabled",
        arguments: [
            Feature(name: "f"),
            Feature(name: "f", enabled: false),
            Feature(name: "f", enabled: false, testVariations: ["A", "B"], testBiases: [10, 90]),
            Feature(name: "f", enabled: false, testVariations: ["Enabled", "Disabled"]),
            Feature(name: "f", enabled: false, testVariations: ["A", "B", "C"]),
            Feature(name: "f", unlocked: true),
            Feature(name: "f", development: true),
        ])
    func disabled(feature: Feature) {
        #expect(feature.assignmentRanges.ranges.map(\.name) == ["Disabled"])
        for point in Self.samplePoints {
            #expect(feature.variation(at: point) == "Disabled", "at \(point)")
        }
    }

    @Test(
        "An enabled plain flag puts everyone in Enabled",
        arguments: [
            Feature(name: "f", enabled: true),
            Feature(name: "f", enabled: true, testBiases: [10, 90]),
            Feature(name: "f", enabled: true, unlocked: false),
            Feature(name: "f", development: true, enabled: true),
            Feature(name: "f", enabled: true, testVariations: ["X"]),
        ])
    func enabledFlag(feature: Feature) {
        #expect(!feature.isBucketed)
        #expect(feature.assignmentRanges.ranges.map(\.name) == ["Enabled"])
        for point in Self.samplePoints {
            #expect(feature.variation(at: point) == "Enabled", "at \(point)")
        }
    }

    struct Bucket: Sendable, CustomTestStringConvertible {
        var feature: Feature
        var point: Double
        var variation: String
        var label: String

        var testDescription: String { "\(label): \(point) → \(variation)" }
    }

    static let ab = Feature(name: "f", testVariations: ["A", "B"], testBiases: [10, 90])
    static let buckets: [Bucket] = [
        Bucket(feature: ab, point: 0, variation: "A", label: "[10, 90]"),
        Bucket(feature: ab, point: 9.99, variation: "A", label: "[10, 90]"),
        Bucket(feature: ab, point: 10.nextDown, variation: "A", label: "[10, 90]"),
        Bucket(feature: ab, point: 10, variation: "B", label: "[10, 90]"),
        Bucket(feature: ab, point: 100.nextDown, variation: "B", label: "[10, 90]"),
        // Biases the client ignores: an equal split, not the written shares.
        Bucket(
            feature: Feature(name: "f", testVariations: ["A", "B"], testBiases: [10, 80]), point: 30, variation: "A",
            label: "sum short [10, 80]"),
        Bucket(
            feature: Feature(name: "f", testVariations: ["A", "B"], testBiases: [10, 80]), point: 50, variation: "B",
            label: "sum short [10, 80]"),
        Bucket(
            feature: Feature(name: "f", testVariations: ["A", "B"], testBiases: [10]), point: 30, variation: "A",
            label: "count mismatch [10]"),
        Bucket(
            feature: Feature(name: "f", testVariations: ["A", "B", "C"], testBiases: [10, 10]), point: 20,
            variation: "A",
            label: "count mismatch [10, 10] on three"),
        Bucket(
            feature: Feature(name: "f", testVariations: ["A", "B", "C"], testBiases: [10, 10]), point: 40,
            variation: "B",
            label: "count mismatch [10, 10] on three"),
        Bucket(
            feature: Feature(name: "f", testVariations: ["A", "B", "C"], testBiases: [10, 10]), point: 70,
            variation: "C",
            label: "count mismatch [10, 10] on three"),
        // Sums over 100 are kept: later groups shrink.
        Bucket(
            feature: Feature(name: "f", testVariations: ["A", "B"], testBiases: [60, 60]), point: 60.nextDown,
            variation: "A",
            label: "[60, 60]"),
        Bucket(
            feature: Feature(name: "f", testVariations: ["A", "B"], testBiases: [60, 60]), point: 60, variation: "B",
            label: "[60, 60]"),
        Bucket(
            feature: Feature(name: "f", testVariations: ["A", "B"], testBiases: [60, 60]), point: 100.nextDown,
            variation: "B",
            label: "[60, 60]"),
        Bucket(
            feature: Feature(name: "f", testVariations: ["A", "B", "C"], testBiases: [50, 50, 50]), point: 100.nextDown,
            variation: "B", label: "[50, 50, 50]: C is unreachable"),
        // The names the client stores.
        Bucket(
            feature: Feature(name: "f", testVariations: ["off", "on"], testBiases: [30, 70]), point: 10,
            variation: "Disabled",
            label: "normalised names"),
        Bucket(
            feature: Feature(name: "f", enabled: true, type: ["feature-test": .string("ab")], testVariations: ["X"]),
            point: 50,
            variation: "!X", label: "a synthetic second variation"),
        // A test with exactly two variations ignores `unlocked`.
        Bucket(
            feature: Feature(name: "f", unlocked: true, testVariations: ["A", "B"], testBiases: [10, 90]), point: 5,
            variation: "A", label: "unlocked ignored on a test"),
    ]

    @Test("A test's variation is the range containing the point, with the biases the client uses", arguments: buckets)
    func testVariation(bucket: Bucket) {
        #expect(bucket.feature.isBucketed)
        #expect(bucket.feature.variation(at: bucket.point) == bucket.variation)
    }

    @Test("A test's assignment ranges are its effective ranges")
    func assignmentRanges() {
        let over = Feature(name: "f", testVariations: ["A", "B"], testBiases: [60, 60])
        #expect(over.assignmentRanges.ranges.map(\.width) == [60, 40])
        let short = Feature(name: "f", testVariations: ["A", "B"], testBiases: [50, 49])
        #expect(short.assignmentRanges.ranges.map(\.width) == [50, 50])
        #expect(Self.ab.assignmentRanges == VariationRanges(of: Self.ab))
    }

    @Test("A user's point decides the group: 10 % of users in the first group of [10, 90]")
    func pointsIntoGroups() {
        let points = UserPoints(salt: "ab-share")
        let count = (0..<20_000).filter { Self.ab.variation(at: points.point(for: "u\($0)")) == "A" }.count
        #expect((1_800...2_200).contains(count), "\(count)")
    }

    // MARK: User ids

    @Test(
        "Invalid user ids",
        arguments: [
            Input(""),
            Input(String(repeating: "a", count: 257)),
            Input(String(repeating: "é", count: 128) + "a"),
            Input("tab\there"),
            Input("line\nbreak"),
            Input("carriage\rreturn"),
            Input("nul\u{0}"),
            Input("\u{1f}unit separator"),
            Input("delete\u{7f}"),
        ])
    func invalidUserID(input: Input) {
        let error = #expect(throws: CoreError.self) { try UserID(validating: input.text) }
        guard case .invalidUserID(let value, let reason)? = error else {
            Issue.record("expected invalidUserID, got \(String(describing: error))")
            return
        }
        #expect(value == input.text)
        #expect(!reason.isEmpty)
    }

    @Test(
        "Valid user ids are kept as written",
        arguments: [
            Input("a"),
            Input("user-42"),
            Input("user 42"),
            Input(" padded "),
            Input("🚩🎉"),
            Input("Zoë"),
            Input(String(repeating: "a", count: 256)),
            Input(String(repeating: "é", count: 128)),
        ])
    func validUserID(input: Input) throws {
        let id = try UserID(validating: input.text)
        #expect(id.rawValue == input.text)
        #expect(id.description == input.text)
        #expect(id == UserID(rawValue: input.text))
    }

    @Test("A user id error says what is wrong")
    func userIDMessage() {
        let message = CoreError.invalidUserID(value: "", reason: "it is empty").description
        #expect(message.contains("it is empty"))
        #expect(throws: CoreError.invalidUserID(value: "", reason: "it is empty")) { try UserID(validating: "") }
        #expect(
            throws: CoreError.invalidUserID(
                value: String(repeating: "x", count: 257), reason: "it is longer than 256 bytes")
        ) {
            try UserID(validating: String(repeating: "x", count: 257))
        }
    }

    // MARK: Pinned documents

    static let pinnedSource = #"""
        {"version": 3, "features": [
            {"x-extra": 1, "labels": ["a", "b"], "name": "T", "test-biases": [10, 90], "test-variations": ["A", "B"]},
            {"name": "U", "enabled": true, "test-variations": ["A", "B", "C"], "x-extra": true},
            {"name": "F", "enabled": true, "x-extra": "f"},
            {"name": "L", "unlocked": false},
            {"name": "M", "unlocked": true, "description": "kept"},
            {"name": "Z", "test-variations": ["Enabled", "Disabled"]}
        ], "after": null}
        """#

    static func pinnedDocument() throws -> FeaturesDocument {
        let decoded = TestSupport.decode(pinnedSource)
        #expect(decoded.diagnostics.isEmpty, "\(decoded.diagnostics)")
        return try #require(decoded.document)
    }

    /// The keys of each feature object of `bytes`, by feature name.
    static func featureObjects(_ bytes: [UInt8]) throws -> [String: JSONNode] {
        let root = try JSONParser.parse(bytes)
        guard case .array(let features) = try #require(root.member("features")).node.content else {
            Issue.record("features is not an array")
            return [:]
        }
        var result: [String: JSONNode] = [:]
        for feature in features {
            guard case .string(let name) = try #require(feature.member("name")).node.content else { continue }
            result[name] = feature
        }
        return result
    }

    static func keys(_ node: JSONNode?) -> [String] {
        guard case .object(let members) = node?.content else { return [] }
        return members.map(\.key)
    }

    @Test("A pinned document carries the point of the named tests only, after labels and before unknown keys")
    func pinnedAssignments() throws {
        let document = try Self.pinnedDocument()
        let tiny = UserPoints.point(hash: 1)
        let pinned = document.pinned(points: ["T": 10.nextDown, "U": tiny], unlocks: [:])
        for style in [JSONWriter.Style.pretty, .compact] {
            let bytes = pinned.rendered(style)
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(text.components(separatedBy: "test-variation-assignment").count - 1 == 2)
            let objects = try Self.featureObjects(bytes)
            #expect(
                Self.keys(objects["T"]) == [
                    "name", "test-variations", "test-biases", "labels", "test-variation-assignment", "x-extra",
                ])
            #expect(
                Self.keys(objects["U"]) == [
                    "name", "enabled", "test-variations", "test-variation-assignment", "x-extra",
                ])
            #expect(Self.keys(objects["F"]) == ["name", "enabled", "x-extra"])
            #expect(Self.keys(objects["Z"]) == ["name", "test-variations"])
            // The exact double comes back, so a point next to a bound stays on its side.
            #expect(objects["T"]?.member("test-variation-assignment")?.node.value == .number(10.nextDown))
            #expect(objects["U"]?.member("test-variation-assignment")?.node.value == .number(tiny))
            #expect(try JSONParser.parse(bytes).value == JSONParser.parse(pinned.rendered(.pretty)).value)
        }
        #expect(Self.ab.variation(at: 10.nextDown) == "A")
    }

    @Test("Pinning nothing, or names the document lacks, renders the shared document")
    func pinnedNothing() throws {
        let document = try Self.pinnedDocument()
        #expect(document.pinned(points: [:], unlocks: [:]).rendered() == document.rendered())
        #expect(document.pinned(points: [:], unlocks: [:]).rendered(.compact) == document.rendered(.compact))
        // Names are exact, as the client looks features up.
        #expect(
            document.pinned(points: ["absent": 5, "t": 5], unlocks: ["absent": true, "l": true]).rendered()
                == document.rendered())
    }

    @Test("A pinned document applies the user's unlock state to unlock flags only")
    func pinnedUnlocks() throws {
        let document = try Self.pinnedDocument()
        let bytes = document.pinned(points: [:], unlocks: ["L": true, "M": false, "F": true, "T": true, "Z": false])
            .rendered()
        let objects = try Self.featureObjects(bytes)
        #expect(objects["L"]?.member("unlocked")?.node.value == .bool(true))
        #expect(objects["M"]?.member("unlocked")?.node.value == .bool(false))
        #expect(Self.keys(objects["M"]) == ["name", "description", "unlocked"])
        for name in ["F", "T", "Z", "U"] {
            #expect(objects[name]?.member("unlocked") == nil, "\(name)")
        }
        // A flag not named keeps its default.
        let untouched = try Self.featureObjects(document.pinned(points: [:], unlocks: ["L": true]).rendered())
        #expect(untouched["M"]?.member("unlocked")?.node.value == .bool(true))
    }

    @Test("Re-reading a pinned document gives W240 for each pinned test, and the same features otherwise")
    func pinnedRedecoded() throws {
        let document = try Self.pinnedDocument()
        let bytes = document.pinned(points: ["T": 42.5, "U": 7], unlocks: ["L": true]).rendered()
        let decoded = DocumentDecoder.decode(bytes)
        #expect(decoded.isValid)
        #expect(decoded.diagnostics.map(\.code) == [.assignmentDropped, .assignmentDropped])
        #expect(decoded.diagnostics.map(\.feature) == ["T", "U"])
        #expect(
            decoded.diagnostics.map(\.pointer.description) == [
                "/features/0/test-variation-assignment", "/features/1/test-variation-assignment",
            ])
        #expect(decoded.diagnostics.allSatisfy { $0.severity == .warning })
        var expected = document
        expected.features[3].unlocked = true
        #expect(decoded.document == expected)
    }
}
