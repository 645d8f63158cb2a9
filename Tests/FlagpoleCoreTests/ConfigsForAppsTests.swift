import FlagpoleCore
import Foundation
import Testing

/// What SwiftFeatureConfigs apps can take: no value may crash one (a JSON `null` that `persist()`
/// hands to `UserDefaults`), be skipped by its `as? T`, or make its override plist unreadable.
@Suite("Configs an app can take")
struct ConfigsForAppsTests {
    static func issues(of file: String) -> [ConfigIssue] {
        do {
            _ = try ConfigsDecoder.decode(Array(file.utf8))
            return []
        } catch {
            return error.issues
        }
    }

    @Test(
        "A JSON null anywhere in a json config is refused with its place, on the command line, in a file and in a body",
        arguments: [#"{"a":null}"#, #"{"a":{"b":[1,null]}}"#, #"{"list":[null]}"#])
    func nullsRefused(json: String) throws {
        #expect(throws: ConfigValueProblem.self) { try ConfigValue(text: json, as: .json) }
        let file = #"{"configs": [{"name": "nulls", "type": "json", "default": \#(json)}]}"#
        let issues = Self.issues(of: file)
        #expect(issues.count == 1)
        let issue = try #require(issues.first)
        #expect(issue.pointer.description.hasPrefix("/configs/0/default/"))
        #expect(issue.message.contains("null") && issue.message.contains("UserDefaults"))
        #expect(issue.location?.line == 1)
        #expect(throws: ConfigsRefused.self) {
            try ConfigsDecoder.decodeConfig(Array(#"{"type": "json", "default": \#(json)}"#.utf8), name: "nulls")
        }
        // A config made in code is checked again before any write stores it.
        let config = Config(
            name: "nulls", type: .json,
            defaultValue: try ConfigValue(JSONParser.parse(Array(json.utf8)).value, as: .json))
        #expect(config.problems().contains { $0.message.contains("null") })
    }

    @Test("A null in a rule's or a variation's value is refused too")
    func nullsInValuesAndRules() {
        let file = #"""
            {"configs": [{"name": "theme", "type": "json", "default": {}, "follows": "Onboarding",
              "values": {"Group B": {"accent": null}},
              "rules": [{"id": "nz", "clauses": [{"attribute": "country", "operator": "equals", "values": ["NZ"]}], "serve": {"value": {"x": null}}}]}]}
            """#
        let pointers = Self.issues(of: file).filter { $0.severity == .error }.map(\.pointer.description)
        #expect(pointers.contains("/configs/0/values/Group B/accent"))
        #expect(pointers.contains("/configs/0/rules/0/serve/value/x"))
    }

    @Test("What a revision already keeps with a null is read without it, and says so")
    func storedNullsLeftOut() throws {
        let stored =
            #"{"configs": [{"name": "theme", "type": "json", "default": {"a": null, "b": [1, null, 2], "c": 3}}]}"#
        let (document, warnings) = try ConfigsDecoder.decodeStored(Array(stored.utf8))
        #expect(
            document.configs.first?.defaultValue
                == .json(["b": .array([.number(1), .number(2)]), "c": .number(3)]))
        #expect(warnings.map(\.pointer.description) == ["/configs/0/default/a", "/configs/0/default/b/1"])
        #expect(warnings.allSatisfy { $0.severity == .warning && $0.message.contains("served without it") })
        let dictionary = String(decoding: ConfigsDictionary.rendered(document.sharedEntries(beside: [])), as: UTF8.self)
        #expect(!dictionary.contains("null"))
    }

    @Test(
        "A C0 control character other than tab, line feed and carriage return is refused in a string, and in a json config's strings and keys",
        arguments: ["\u{7}", "\u{1}", "\u{1B}", "\u{1F}"])
    func controlCharactersRefused(control: String) throws {
        #expect(throws: ConfigValueProblem.self) { try ConfigValue(text: "bell\(control)", as: .string) }
        let escaped = String(format: "\\u%04x", control.unicodeScalars.first!.value)
        for file in [
            #"{"configs": [{"name": "title", "type": "string", "default": "a\#(escaped)b"}]}"#,
            #"{"configs": [{"name": "theme", "type": "json", "default": {"k\#(escaped)": 1}}]}"#,
            #"{"configs": [{"name": "theme", "type": "json", "default": {"k": ["a\#(escaped)"]}}]}"#,
        ] {
            let issues = Self.issues(of: file)
            #expect(issues.count == 1, "\(file)")
            #expect(issues.first?.message.contains("U+00") == true && issues.first?.message.contains("plist") == true)
        }
    }

    @Test("Tab, line feed and carriage return stay, and the plist carries them")
    func allowedControls() throws {
        let value = try ConfigValue(text: "a\tb\nc\rd", as: .string)
        #expect(value == .string("a\tb\nc\rd"))
        let plist = ConfigPlist.render([("title", value)])
        let read = try PropertyListSerialization.propertyList(from: Data(plist), format: nil) as? [String: Any]
        #expect(read?["title"] as? String == "a\tb\nc\rd")
    }

    @Test(
        "A number too small for a double is refused, not stored as zero; zero and the smallest double stay",
        arguments: ["1e-400", "-2.5e-330", "0.0000000001e-320"])
    func underflowRefused(text: String) throws {
        #expect(throws: ConfigValueProblem.self) { try ConfigValue(text: text, as: .double) }
        #expect(throws: ConfigValueProblem.self) { try ConfigValue(text: #"{"a": [\#(text)]}"#, as: .json) }
        let issues = Self.issues(of: #"{"configs": [{"name": "tiny", "type": "double", "default": \#(text)}]}"#)
        #expect(issues.first?.message.contains("too small") == true)
        let nested = Self.issues(of: #"{"configs": [{"name": "t", "type": "json", "default": {"a": [1, \#(text)]}}]}"#)
        #expect(nested.map(\.pointer.description) == ["/configs/0/default/a/1"])
        // features.json reads it as 0, as the FeatureFlags client does: only configs refuse it.
        #expect(try JSONParser.parse(Array("[\(text)]".utf8)).value == .array([.number(0)]))
    }

    @Test(
        "A rule's served value is checked as a default is: too small for a double, or an integer a json value would change",
        arguments: [("double", "1e-400"), ("json", #"{"a": 1e-400}"#), ("json", #"{"id": 9007199254740993}"#)])
    func ruleValuesChecked(type: String, value: String) throws {
        let defaultValue = type == "json" ? "{}" : "1.5"
        let file =
            #"{"configs": [{"name": "c", "type": "\#(type)", "default": \#(defaultValue), "rules": [{"id": "r", "clauses": [], "serve": {"value": \#(value)}}]}]}"#
        let issues = Self.issues(of: file)
        #expect(issues.count == 1, "\(issues)")
        #expect(issues.first?.pointer.description.hasPrefix("/configs/0/rules/0/serve/value") == true, "\(issues)")
    }

    @Test(
        "An integer beyond ±(2^53 − 1) in a json config is refused with what it would become, never rounded silently",
        arguments: ["9007199254740993", "-9007199254740993", "99999999999999999999", "9007199254740992"])
    func largeIntegersRefused(text: String) throws {
        #expect(throws: ConfigValueProblem.self) { try ConfigValue(text: #"{"id": \#(text)}"#, as: .json) }
        let issues = Self.issues(
            of: #"{"configs": [{"name": "j", "type": "json", "default": {"ids": [1, \#(text)]}}]}"#)
        #expect(issues.map(\.pointer.description) == ["/configs/0/default/ids/1"])
        #expect(issues.first?.message.contains("served as") == true, "\(issues)")
        // A double config is a double: apps read it as one, as written.
        #expect(Self.issues(of: #"{"configs": [{"name": "d", "type": "double", "default": \#(text)}]}"#).isEmpty)
    }

    @Test("Integers up to ±(2^53 − 1), and large numbers written with an exponent or a point, stay in json configs")
    func exactNumbersKept() throws {
        for text in ["9007199254740991", "-9007199254740991", "1e20", "12345678901234567890.5", "0.1"] {
            _ = try ConfigValue(text: #"{"n": \#(text)}"#, as: .json)
        }
    }

    /// `{"a": {"a": … 1}}`, `levels` objects deep.
    static func nested(_ levels: Int) -> String {
        String(repeating: #"{"a":"#, count: levels) + "1" + String(repeating: "}", count: levels)
    }

    @Test("A json config nested deeper than 32 levels is refused on the command line and in a file")
    func deepValuesRefused() throws {
        _ = try ConfigValue(text: Self.nested(ConfigValue.maximumJSONDepth), as: .json)
        for levels in [ConfigValue.maximumJSONDepth + 1, 300, 508] {
            #expect(throws: ConfigValue.depthProblem) { try ConfigValue(text: Self.nested(levels), as: .json) }
            let issues = Self.issues(
                of: #"{"configs": [{"name": "deep", "type": "json", "default": \#(Self.nested(levels))}]}"#)
            #expect(issues.map(\.message) == [ConfigValue.depthProblem.message])
        }
        let array = String(repeating: "[", count: 33) + String(repeating: "]", count: 33)
        #expect(
            Self.issues(of: #"{"configs": [{"name": "deep", "type": "json", "default": {"a": \#(array)}}]}"#).count == 1
        )
    }

    @Test(
        "A value an earlier version stored deeper than the parser's bound, three levels down, still reads, with a warning"
    )
    func storedDeepValuesRead() throws {
        let stored =
            #"{"configs": [{"name": "deep", "type": "json", "default": \#(Self.nested(JSONParser.maximumDepth - 1))}]}"#
        #expect(throws: ConfigsRefused.self) { try ConfigsDecoder.decode(Array(stored.utf8)) }
        let (document, warnings) = try ConfigsDecoder.decodeStored(Array(stored.utf8))
        #expect(document.configs.map(\.name) == ["deep"])
        #expect(warnings.count == 1 && warnings.first?.message.contains("served as it is") == true, "\(warnings)")
    }

    @Test(
        "Zero written any way, and the smallest subnormal, are numbers",
        arguments: ["0", "0.0", "-0e10", "0e-400", "5e-324"])
    func zerosAccepted(text: String) throws {
        _ = try ConfigValue(text: text, as: .double)
        _ = try JSONParser.parse(Array("[\(text)]".utf8))
    }

    @Test("A double is written with its decimal point by itself, in a list and in a document with its revision")
    func doublesKeepTheirPoint() {
        let config = Config(name: "ratio", type: .double, defaultValue: .double(2))
        #expect(String(decoding: config.rendered(), as: UTF8.self).contains(#""default": 2.0"#))
        #expect(String(decoding: Config.rendered([config]), as: UTF8.self).contains(#""default": 2.0"#))
        let document = ConfigsDocument(configs: [config])
        let text = String(decoding: document.rendered(revision: .some(4)), as: UTF8.self)
        #expect(text.hasPrefix("{\n    \"revision\": 4,\n    \"configs\": ["))
        #expect(text.contains(#""default": 2.0"#))
    }

    @Test("A Float holds 0.5 and 12.0, not 0.1 or 1e39, as the app's `as? Float` casts")
    func floatCasts() {
        #expect(DeclaredType.float.problem(with: .double(0.5)) == nil)
        #expect(DeclaredType.float.problem(with: .double(12)) == nil)
        #expect(DeclaredType.float.problem(with: .double(0.1)) != nil)
        #expect(DeclaredType.float.problem(with: .double(1e39)) != nil)
        #expect(DeclaredType.double.problem(with: .double(0.1)) == nil)
        #expect(DeclaredType.int.problem(with: .string("15"))?.contains("as? Int") == true)
    }
}
