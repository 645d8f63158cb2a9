import FlagpoleCore
import FlagpoleTestSupport

/// Makes hostile variants of real files: byte-level damage (flips, cuts, JSON tokens, splices)
/// and structural changes of the parsed JSON (wrong types, out-of-range biases, huge numbers,
/// duplicate names, deep nesting), each input described by the steps that made it.
struct DocumentMutator {
    let seeds: [[UInt8]]
    /// The seeds that parse, as values to mutate structurally.
    let values: [JSONValue]
    var random: SeededGenerator

    init(seeds: [[UInt8]], random: SeededGenerator) {
        self.seeds = seeds
        self.values = seeds.compactMap { try? JSONParser.parse($0).value }
        self.random = random
    }

    /// One input, and the steps that made it.
    mutating func next() -> (bytes: [UInt8], steps: [String]) {
        var steps: [String] = []
        var bytes: [UInt8]
        if !values.isEmpty && chance(0.5) {
            var value = pick(values)
            for _ in 0..<int(1...4) { steps.append(mutate(&value)) }
            let style: JSONWriter.Style = chance(0.5) ? .compact : .pretty(indent: int(0...8))
            bytes = JSONWriter(style: style).bytes(of: value)
            steps.insert("structural, rendered \(style)", at: 0)
            if chance(0.3) { steps.append(damage(&bytes)) }
        } else {
            bytes = pick(seeds)
            steps.append("bytes")
            for _ in 0..<int(1...6) { steps.append(damage(&bytes)) }
        }
        return (bytes, steps)
    }

    // MARK: Byte-level damage

    static let tokens: [String] = [
        "{", "}", "[", "]", ",", ":", "\"", "\\", "\\u", "\\uD800", "\\uDC00\\uD800", "\\u0000", "\\x", "true", "false",
        "null", "-0", "1e400", "-1e400", "1e-400", "NaN", "Infinity", "-", "01", "1.", ".5", "/* c */", "// c\n",
        "\u{FEFF}", "\"features\"", "\"name\"", "\"test-biases\"", "\"test-variations\"", "\"type\"", "\"labels\"",
        ",,", "[[[[", "]]]]", "{\"a\":", " \t\r\n", "\"é\"", "\"e\u{301}\"",
    ]

    static let rawTokens: [[UInt8]] = [
        [0x00], [0x80], [0xC3], [0xC3, 0x28], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xC0, 0x80], [0xFF],
        [0xEF, 0xBB, 0xBF], [0x7F], [0x1F],
    ]

    static let numbers: [String] = [
        "1e400", "-1e400", "1e-400", "-0", "-0.0", "0e0", "9223372036854775808", "-9223372036854775809",
        "18446744073709551616", "1" + String(repeating: "0", count: 400),
        "0." + String(repeating: "0", count: 400) + "1",
        "100.00000000000001", "99.999999999999999", "1.7976931348623157e308", "1.7976931348623159e308", "4.9e-324",
        "2.4703282292062328e-324", "1E+2", "1.5e-3",
    ]

    mutating func damage(_ bytes: inout [UInt8]) -> String {
        let position = int(0...bytes.count)
        switch int(0...8) {
        case 0 where !bytes.isEmpty:
            let index = int(0...bytes.count - 1)
            let bit = int(0...7)
            bytes[index] ^= 1 << bit
            return "flip bit \(bit) at \(index)"
        case 1 where !bytes.isEmpty:
            let index = int(0...bytes.count - 1)
            let byte = pick(Array("\"\\{}[],:/0-eE.n \n".utf8) + [0x00, 0x80, 0xBF, 0xC3, 0xED, 0xEF, 0xFF])
            bytes[index] = byte
            return "set byte \(index) to 0x\(String(byte, radix: 16))"
        case 2:
            bytes.removeSubrange(position...)
            return "truncate at \(position)"
        case 3:
            let end = min(bytes.count, position + int(1...32))
            bytes.removeSubrange(position..<end)
            return "delete \(position)..<\(end)"
        case 4:
            let token = chance(0.8) ? Array(pick(Self.tokens).utf8) : pick(Self.rawTokens)
            bytes.insert(contentsOf: token, at: position)
            return "insert \(token) at \(position)"
        case 5:
            let end = min(bytes.count, position + int(1...64))
            let slice = Array(bytes[position..<end])
            let target = int(0...bytes.count)
            bytes.insert(contentsOf: slice, at: target)
            return "copy \(position)..<\(end) to \(target)"
        case 6:
            let other = pick(seeds)
            let cut = int(0...other.count)
            bytes = Array(bytes[..<position]) + Array(other[cut...])
            return "splice at \(position) with another seed from \(cut)"
        case 7:
            // A number replaced by one no double holds, or one at the edge of what doubles hold.
            let digits = bytes.indices.filter { bytes[$0] >= UInt8(ascii: "0") && bytes[$0] <= UInt8(ascii: "9") }
            guard !digits.isEmpty else { return "no number to replace" }
            var start = pick(digits)
            var end = start
            let numeric = Set("0123456789+-.eE".utf8)
            while start > 0 && numeric.contains(bytes[start - 1]) { start -= 1 }
            while end < bytes.count && numeric.contains(bytes[end]) { end += 1 }
            let number = pick(Self.numbers)
            bytes.replaceSubrange(start..<end, with: number.utf8)
            return
                "number at \(start) becomes \(number.count > 30 ? "\(number.prefix(12))… (\(number.count) characters)" : number)"
        default:
            let repeated = pick(["[", "{\"a\":", "[{\"name\":\"d\"},"])
            let count = pick([100, 511, 512, 513, 2_000])
            bytes.insert(contentsOf: Array(String(repeating: repeated, count: count).utf8), at: position)
            return "insert \(repeated) ×\(count) at \(position)"
        }
    }

    // MARK: Structural changes

    static let hostileNumbers: [Double] = [
        0, -0.0, 1, 50, 99.99999999999999, 100, 100.00000000000001, 33.3, 101, -1, -50, 1e20, 0x1p63, 0x1p53 + 1,
        1e308, -1e308, .greatestFiniteMagnitude, .leastNonzeroMagnitude, .leastNormalMagnitude, 1e-7,
    ]

    static let hostileStrings: [String] = [
        "", "a", "A", "Enabled", "enabled", "Disabled", "off", "On", "!A", "\u{E9}", "e\u{301}", "\u{0}", "a\u{0}b",
        "\u{FEFF}",
        "\u{2028}", "🚀", "\"\\/\n\t\u{1}\u{7F}", "features", "name", "\u{10FFFF}", String(repeating: "x", count: 5_000),
    ]

    static let keys = Feature.knownKeys + [Feature.assignmentKey, "features", "unknown", "_comment"]

    mutating func hostileValue() -> JSONValue {
        switch int(0...9) {
        case 0: return .null
        case 1: return .bool(chance(0.5))
        case 2, 3: return .number(pick(Self.hostileNumbers))
        case 4, 5: return .string(pick(Self.hostileStrings))
        case 6:
            return .array(
                (0..<int(0...4)).map { _ in
                    chance(0.5) ? .number(pick(Self.hostileNumbers)) : .string(pick(Self.hostileStrings))
                })
        case 7:
            return .object(
                JSONObject([
                    .init(
                        key: pick(["feature-flag", "feature-test", "unlock-flag", "x"]),
                        value: .string(pick(["ab", "mvt", "featureFlagAB", "AB", "flag"])))
                ]))
        case 8: return .object(JSONObject())
        default:
            var value = JSONValue.number(1)
            for _ in 0..<pick([10, 200, 509, 510, 511, 600]) {
                value = chance(0.5) ? .array([value]) : .object(["k": value])
            }
            return value
        }
    }

    /// Changes one node of `value`; returns what it did.
    mutating func mutate(_ value: inout JSONValue) -> String {
        // Features are the interesting part: aim there most of the time.
        if chance(0.7), case .object(var root) = value,
            let index = root.members.firstIndex(where: { $0.key == "features" }),
            case .array(var features) = root.members[index].value, !features.isEmpty
        {
            let feature = int(0...features.count - 1)
            let step = mutateFeature(&features, at: feature)
            root.members[index].value = .array(features)
            value = .object(root)
            return "/features/\(feature): \(step)"
        }
        return mutateNode(&value, path: "")
    }

    mutating func mutateFeature(_ features: inout [JSONValue], at index: Int) -> String {
        guard case .object(var feature) = features[index] else {
            features[index] = hostileValue()
            return "replaced"
        }
        var step: String
        switch int(0...7) {
        case 0:
            let biases = (0..<int(0...5)).map { _ in
                JSONValue.number(chance(0.6) ? Double(int(0...100)) : pick(Self.hostileNumbers))
            }
            feature.set("test-biases", .array(biases))
            step = "test-biases = \(biases.count) numbers"
        case 1:
            let names = (0..<int(0...5)).map { _ in
                JSONValue.string(pick(Self.hostileStrings.prefix(12) + ["Control", "B", "b"]))
            }
            feature.set("test-variations", .array(names))
            step = "test-variations = \(names.count) names"
        case 2:
            let others = features.compactMap { value -> String? in
                if case .object(let other) = value, case .string(let name)? = other["name"] { return name }
                return nil
            }
            let name = chance(0.5) && !others.isEmpty ? pick(others) : pick(Self.hostileStrings)
            feature.set("name", .string(name))
            step = "name = \(name.debugDescription.prefix(40))"
        case 3:
            let key = pick(Self.keys)
            feature.set(key, hostileValue())
            step = "\(key) = a hostile value"
        case 4 where !feature.isEmpty:
            let removed = feature.members.remove(at: int(0...feature.members.count - 1))
            step = "remove \(removed.key)"
        case 5:
            features.insert(features[index], at: int(0...features.count))
            return "duplicated"
        case 6:
            var value = JSONValue.object(feature)
            step = mutateNode(&value, path: "")
            features[index] = value
            return step
        default:
            let labels = (0..<int(0...5)).map { _ in chance(0.3) ? JSONValue.null : .string(pick(Self.hostileStrings)) }
            feature.set("labels", .array(labels))
            step = "labels = \(labels.count) labels"
        }
        features[index] = .object(feature)
        return step
    }

    /// Walks down to a random node and changes it.
    mutating func mutateNode(_ value: inout JSONValue, path: String) -> String {
        switch value {
        case .array(var elements) where !elements.isEmpty && chance(0.7):
            let index = int(0...elements.count - 1)
            let step = mutateNode(&elements[index], path: path + "/\(index)")
            value = .array(elements)
            return step
        case .object(var object) where !object.isEmpty && chance(0.7):
            let index = int(0...object.members.count - 1)
            let step = mutateNode(&object.members[index].value, path: path + "/" + object.members[index].key)
            value = .object(object)
            return step
        case .object(var object) where !object.isEmpty && chance(0.3):
            // A duplicate key: the parser must refuse it, with the position of the second.
            object.members.append(pick(object.members))
            value = .object(object)
            return "\(path): duplicate a key"
        case .array(var elements) where chance(0.3):
            elements.append(hostileValue())
            value = .array(elements)
            return "\(path): append a hostile value"
        default:
            value = hostileValue()
            return "\(path): replace with a hostile value"
        }
    }

    // MARK: Randomness

    mutating func chance(_ probability: Double) -> Bool {
        Double.random(in: 0..<1, using: &random) < probability
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &random)
    }

    mutating func pick<C: Collection>(_ collection: C) -> C.Element {
        collection.randomElement(using: &random)!
    }
}

extension JSONObject {
    /// Replaces the first member named `key`, or appends one.
    mutating func set(_ key: String, _ value: JSONValue) {
        if let index = members.firstIndex(where: { $0.key == key }) {
            members[index].value = value
        } else {
            append(key, value)
        }
    }
}
