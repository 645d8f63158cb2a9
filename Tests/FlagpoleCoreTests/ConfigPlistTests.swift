import FlagpoleCore
import Foundation
import Testing

/// The override plist SwiftFeatureConfigs reads, checked against the library's own file, against
/// Foundation's reader (Apple's CoreFoundation parser, the one `NSDictionary(contentsOf:)` runs in
/// the app) and, when it is installed, against Python's plistlib, which shares no code with it.
@Suite("SwiftFeatureConfigs override plist")
struct ConfigPlistTests {
    /// The four values of the library's FeaturesOverride.plist, in its order.
    static let fixtureEntries: [(key: String, value: ConfigValue)] = [
        ("boolFeature", .bool(true)), ("intFeature", .int(456)), ("doubleFeature", .double(987.45)),
        ("stringFeature", .string("kjshdkjhsdf")),
    ]

    @Test("The library's own override file is what its four values render to, byte for byte")
    func fixture() throws {
        let fixture = try TestSupport.swiftFeatureConfigsFixture("FeaturesOverride.plist")
        let rendered = ConfigPlist.render(Self.fixtureEntries)
        #expect(String(decoding: rendered, as: UTF8.self) == String(decoding: fixture, as: UTF8.self))
        // And the same keys and values, whatever the layout.
        let read = try Self.readBack(rendered)
        #expect(read.isEqual(try Self.readBack(fixture)))
        #expect(read["boolFeature"] as? Bool == true)
        #expect(read["intFeature"] as? Int == 456)
        #expect(read["doubleFeature"] as? Double == 987.45)
        #expect(read["stringFeature"] as? String == "kjshdkjhsdf")
    }

    @Test("No entries make an empty dictionary")
    func empty() {
        #expect(
            String(decoding: ConfigPlist.render([]), as: UTF8.self).hasSuffix(
                "<plist version=\"1.0\">\n<dict/>\n</plist>\n"))
    }

    @Test(
        "A double is written as text that reads back as the same double",
        arguments: [
            0.1, 2.0, 1e300, -0.0, 12.4, 987.45, .pi, .leastNonzeroMagnitude, 1e-7, 1e20, 9_007_199_254_740_992, -1.5,
            .greatestFiniteMagnitude,
        ])
    func doubles(number: Double) throws {
        let text = String(decoding: ConfigPlist.render([("d", .double(number))]), as: UTF8.self)
        let written = try #require(text.split(separator: "\n").first { $0.contains("<real>") })
        let inner = written.replacingOccurrences(of: "\t<real>", with: "").replacingOccurrences(of: "</real>", with: "")
        #expect(Double(inner)?.bitPattern == number.bitPattern, "\(inner)")
        let read = try #require(try Self.readBack(Array(text.utf8))["d"] as? Double)
        #expect(read == number)
    }

    @Test("Doubles without a decimal form are written as Apple's reader spells them")
    func nonFiniteDoubles() throws {
        let rendered = ConfigPlist.render([
            ("nan", .double(.nan)), ("up", .double(.infinity)), ("down", .double(-.infinity)),
        ])
        let text = String(decoding: rendered, as: UTF8.self)
        #expect(text.contains("<real>nan</real>") && text.contains("<real>+infinity</real>"))
        #expect(text.contains("<real>-infinity</real>"))
        let read = try Self.readBack(rendered)
        #expect((read["nan"] as? Double)?.isNaN == true)
        #expect(read["up"] as? Double == .infinity)
        #expect(read["down"] as? Double == -.infinity)
    }

    @Test("Keys and strings are escaped for XML, and read back unchanged")
    func escaping() throws {
        let key = "a<b>&c"
        let value = "x < y && z > w; ]]> \"quoted\" 'single' tab\there\nline café 🚩"
        let rendered = ConfigPlist.render([(key, .string(value))])
        let text = String(decoding: rendered, as: UTF8.self)
        #expect(text.contains("\t<key>a&lt;b&gt;&amp;c</key>\n"))
        #expect(
            text.contains(
                "<string>x &lt; y &amp;&amp; z &gt; w; ]]&gt; \"quoted\" 'single' tab\there\nline café 🚩</string>"))
        #expect(try Self.readBack(rendered)[key] as? String == value)
    }

    @Test("Control characters are written as references, which Apple's reader decodes")
    func controlCharacters() throws {
        let value = "carriage\r\nreturn, bell\u{7}, escape\u{1B}, nul\u{0}"
        let rendered = ConfigPlist.render([("c", .string(value))])
        let text = String(decoding: rendered, as: UTF8.self)
        #expect(text.contains("<string>carriage&#xd;\nreturn, bell&#x7;, escape&#x1b;, nul&#x0;</string>"))
        #expect(try Self.readBack(rendered)["c"] as? String == value)
    }

    @Test("A JSON config is a nested dictionary: whole numbers integers, others reals, nulls left out")
    func jsonObject() throws {
        let object: JSONObject = [
            "name": .string("banner"),
            "count": .number(3),
            "ratio": .number(0.25),
            "big": .number(0x1p60),
            "negative": .number(-9_007_199_254_740_991),
            "shown": .bool(false),
            "missing": .null,
            "sizes": .array([.number(1), .null, .number(2.5), .array([]), .object([:])]),
            "nested": .object(["deep": .object(["flag": .bool(true)])]),
        ]
        let rendered = ConfigPlist.render([("banner", .json(object)), ("after", .int(1))])
        let expected =
            Self.header + """
                <dict>
                \t<key>banner</key>
                \t<dict>
                \t\t<key>name</key>
                \t\t<string>banner</string>
                \t\t<key>count</key>
                \t\t<integer>3</integer>
                \t\t<key>ratio</key>
                \t\t<real>0.25</real>
                \t\t<key>big</key>
                \t\t<real>1.152921504606847e+18</real>
                \t\t<key>negative</key>
                \t\t<integer>-9007199254740991</integer>
                \t\t<key>shown</key>
                \t\t<false/>
                \t\t<key>sizes</key>
                \t\t<array>
                \t\t\t<integer>1</integer>
                \t\t\t<real>2.5</real>
                \t\t\t<array/>
                \t\t\t<dict/>
                \t\t</array>
                \t\t<key>nested</key>
                \t\t<dict>
                \t\t\t<key>deep</key>
                \t\t\t<dict>
                \t\t\t\t<key>flag</key>
                \t\t\t\t<true/>
                \t\t\t</dict>
                \t\t</dict>
                \t</dict>
                \t<key>after</key>
                \t<integer>1</integer>
                </dict>
                </plist>

                """
        #expect(String(decoding: rendered, as: UTF8.self) == expected)
        let read = try Self.readBack(rendered)
        let banner = try #require(read["banner"] as? [String: Any])
        #expect(banner["missing"] == nil)
        #expect((banner["sizes"] as? [Any])?.count == 4)
        #expect(read["after"] as? Int == 1)
    }

    @Test(
        "Python's plistlib reads every type as its own: bool, int, float, str, dict, list",
        .enabled(if: PythonPlistlib.isAvailable, "python3 with plistlib is not installed"))
    func pythonPlistlib() throws {
        let rendered = ConfigPlist.render(
            Self.fixtureEntries + [
                ("off", .bool(false)), ("negative", .int(-9_007_199_254_740_991)), ("tenth", .double(0.1)),
                ("two", .double(2)), ("huge", .double(1e300)), ("escaped", .string("a < b && c > d\r\n")),
                (
                    "object",
                    .json([
                        "count": .number(3), "ratio": .number(0.5), "big": .number(0x1p60), "gone": .null,
                        "list": .array([.bool(true), .string("x"), .null, .object(["k": .number(-1)])]),
                    ])
                ),
            ])
        let read = try PythonPlistlib.read(rendered)
        let expected: Typed = .dict([
            .init("boolFeature", .bool(true)), .init("intFeature", .int(456)),
            .init("doubleFeature", .float(987.45)), .init("stringFeature", .string("kjshdkjhsdf")),
            .init("off", .bool(false)), .init("negative", .int(-9_007_199_254_740_991)), .init("tenth", .float(0.1)),
            .init("two", .float(2)), .init("huge", .float(1e300)), .init("escaped", .string("a < b && c > d\r\n")),
            .init(
                "object",
                .dict([
                    .init("count", .int(3)), .init("ratio", .float(0.5)), .init("big", .float(0x1p60)),
                    .init("list", .list([.bool(true), .string("x"), .dict([.init("k", .int(-1))])])),
                ])),
        ])
        #expect(read == expected)
    }

    // MARK: Helpers

    /// What every plist starts with, as Apple writes it.
    static let header = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">

        """

    /// `bytes` read by Foundation's property-list reader, as the app reads its override file.
    static func readBack(_ bytes: [UInt8]) throws -> NSDictionary {
        let plist = try PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: nil)
        return try #require(plist as? NSDictionary)
    }
}

/// A value as Python's plistlib typed it.
indirect enum Typed: Equatable, CustomStringConvertible {
    case bool(Bool)
    case int(Int64)
    case float(Double)
    case string(String)
    case dict([Member])
    case list([Typed])

    struct Member: Equatable {
        var key: String
        var value: Typed

        init(_ key: String, _ value: Typed) {
            self.key = key
            self.value = value
        }
    }

    /// Reads the `["type", value]` pairs the script prints (integers and floats as their text, so
    /// that no JSON reader rounds them).
    init?(_ json: JSONValue) {
        guard case .array(let pair) = json, pair.count == 2, case .string(let tag) = pair[0] else { return nil }
        switch (tag, pair[1]) {
        case ("bool", .bool(let flag)): self = .bool(flag)
        case ("int", .string(let text)):
            guard let number = Int64(text) else { return nil }
            self = .int(number)
        case ("float", .string(let text)):
            guard let number = Double(text) else { return nil }
            self = .float(number)
        case ("str", .string(let text)): self = .string(text)
        case ("dict", .array(let members)):
            var read: [Member] = []
            for case .array(let member) in members {
                guard member.count == 2, case .string(let key) = member[0], let value = Typed(member[1]) else {
                    return nil
                }
                read.append(Member(key, value))
            }
            self = .dict(read)
        case ("list", .array(let elements)):
            let read = elements.compactMap(Typed.init)
            guard read.count == elements.count else { return nil }
            self = .list(read)
        default: return nil
        }
    }

    var description: String {
        switch self {
        case .bool(let flag): "bool \(flag)"
        case .int(let number): "int \(number)"
        case .float(let number): "float \(number)"
        case .string(let text): "str \(text.debugDescription)"
        case .dict(let members): "{" + members.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case .list(let elements): "[" + elements.map(\.description).joined(separator: ", ") + "]"
        }
    }
}

/// `python3 -c` with plistlib: the rendered bytes on its standard input, its output to files,
/// as EndToEndTests' `ChildProcess` runs a child.
enum PythonPlistlib {
    /// Prints the plist on standard input as `["type", value]` pairs, dictionaries in their order.
    static let script = """
        import json, plistlib, sys
        def typed(v):
            if isinstance(v, bool): return ["bool", v]
            if isinstance(v, int): return ["int", str(v)]
            if isinstance(v, float): return ["float", repr(v)]
            if isinstance(v, str): return ["str", v]
            if isinstance(v, dict): return ["dict", [[k, typed(x)] for k, x in v.items()]]
            if isinstance(v, list): return ["list", [typed(x) for x in v]]
            return [type(v).__name__, repr(v)]
        json.dump(typed(plistlib.loads(sys.stdin.buffer.read())), sys.stdout)
        """

    static let isAvailable: Bool = (try? run(["-c", "import plistlib"], input: []))?.status == 0

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The plist `bytes` as plistlib types it.
    static func read(_ bytes: [UInt8]) throws -> Typed {
        let (status, output, errors) = try run(["-c", script], input: bytes)
        guard status == 0 else {
            throw Failure(description: "python3 exited \(status): \(String(decoding: errors, as: UTF8.self))")
        }
        guard let typed = Typed(try JSONParser.parse(output).value) else {
            throw Failure(description: "unexpected output: \(String(decoding: output, as: UTF8.self))")
        }
        return typed
    }

    private static func run(
        _ arguments: [String], input: [UInt8]
    ) throws -> (status: Int32, output: [UInt8], errors: [UInt8]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "flagpole-plistlib-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outURL = directory.appendingPathComponent("stdout")
        let errURL = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        let stdin = Pipe()
        process.standardInput = stdin
        try process.run()
        stdin.fileHandleForWriting.write(Data(input))
        try stdin.fileHandleForWriting.close()
        // Foundation's waitUntilExit() on Linux waits in 50 ms steps; isRunning is prompt.
        while process.isRunning { usleep(500) }
        process.waitUntilExit()
        return (
            process.terminationStatus, Array(try Data(contentsOf: outURL)), Array(try Data(contentsOf: errURL))
        )
    }
}
