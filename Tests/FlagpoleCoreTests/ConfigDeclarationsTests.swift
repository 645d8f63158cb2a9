import FlagpoleCore
import Foundation
import Testing

/// SwiftFeatureConfigs' declaration file, `featureConfigs.json`: the repository's own file, and
/// the problems the generator lets through or chokes on.
@Suite("SwiftFeatureConfigs declarations")
struct ConfigDeclarationsTests {
    @Test("The repository's file declares its twelve configs, each named by its key or else its name")
    func realFixture() throws {
        let declarations = try ConfigDeclarations.decode(
            try TestSupport.swiftFeatureConfigsFixture("featureConfigs.json"))
        #expect(declarations.collectionName == "MyFeatures")
        #expect(
            declarations.configs.map(\.name) == [
                "isaEnabledKey", "navigationBarIsVisible", "otherThingEnabledKey102", "otherThingEnabledKey2",
                "otherThingEnabled3", "otherThingEnabled4", "otherThingEnabled5", "otherThingEnabled6",
                "otherThingEnabled7", "specialFloatValue", "numberOfCellsToDisplaySomeWhere", "titleStringKey",
            ])
        #expect(declarations.configs.map(\.type) == Array(repeating: .bool, count: 9) + [.double, .int, .string])
        #expect(
            declarations.configs.map(\.defaultValue) == [.bool(false)] + Array(repeating: .bool(true), count: 8) + [
                .double(12.4), .int(12), .string("My Default title"),
            ])
        let docs: [String?] = [
            "Set true if ISAs should be visible in the app", "Set true if the main navigationBar should be visible",
        ]
        #expect(declarations.configs.map(\.description) == docs + Array(repeating: nil, count: 10))
        #expect(declarations.configs.allSatisfy { $0.tags.isEmpty && $0.follows == nil && $0.values.isEmpty })
    }

    @Test("Each of the fixture's twelve trailing commas is a warning at its own line and column")
    func realFixtureTrailingCommas() throws {
        let declarations = try ConfigDeclarations.decode(
            try TestSupport.swiftFeatureConfigsFixture("featureConfigs.json"))
        // Every feature ends with a comma before its `}`; the `]` after the last has none.
        let expected = [
            Position(line: 9, column: 70), Position(line: 15, column: 33), Position(line: 20, column: 33),
            Position(line: 25, column: 33), Position(line: 29, column: 33), Position(line: 33, column: 33),
            Position(line: 37, column: 33), Position(line: 41, column: 33), Position(line: 45, column: 33),
            Position(line: 50, column: 33), Position(line: 55, column: 31), Position(line: 61, column: 45),
        ]
        let commas = declarations.warnings.filter { $0.message.contains("comma before `}`") }
        #expect(commas.map(\.location) == expected)
        #expect(commas.allSatisfy { $0.severity == .warning })
    }

    @Test("Keys that are no property's name, and the @objc persist() needs, are warnings naming each config")
    func persistWarnings() throws {
        let declarations = try ConfigDeclarations.decode(
            try TestSupport.swiftFeatureConfigsFixture("featureConfigs.json"))
        let custom: Set<String> = [
            "isaEnabledKey", "otherThingEnabledKey102", "otherThingEnabledKey2", "titleStringKey",
        ]
        #expect(declarations.keysWithoutGetters == custom)
        let keyWarnings = declarations.warnings.filter { $0.message.contains("perform(Selector(\"") }
        #expect(Set(keyWarnings.compactMap(\.config)) == custom)
        #expect(keyWarnings.allSatisfy { $0.location != nil && $0.pointer.description.hasSuffix("/key") })
        let objc = try #require(declarations.warnings.first { $0.message.contains("@objcMembers") })
        #expect(declarations.configs.allSatisfy { objc.message.contains("\"\($0.name)\"") })
    }

    @Test(
        "A default that does not read as its type is an error at the default's value",
        arguments: [
            ("Int", "12x"), ("Bool", "yes"), ("Bool", "True"), ("Int", "12.5"), ("Float", "twelve"),
            ("Double", "1e400"), ("Int", "9007199254740992"),
        ])
    func badDefault(type: String, text: String) throws {
        let issues = try refusal(
            """
            {
                "configCollectionName": "MyFeatures",
                "features": [
                    {"type": "Bool", "name": "fine", "default": "true"},
                    {
                        "type": "\(type)",
                        "name": "broken",
                        "default": ‸"\(text)",
                    },
                ]
            }
            """)
        let error = try #require(issues.errors.only)
        #expect(error.location == issues.marks[0])
        #expect(error.pointer == JSONPointer.root.appending("features").appending(1).appending("default"))
        #expect(error.config == "broken")
        #expect(error.message.contains(text))
        #expect(!error.fix.isEmpty)
        // The two trailing commas are still reported beside the error.
        #expect(issues.all.count { $0.severity == .warning && $0.message.contains("comma") } == 2)
    }

    @Test("Bool, Int, Float, Double and String declare bool, int, double, double and string configs")
    func types() throws {
        let declarations = try ConfigDeclarations.decode(
            Array(
                """
                {"configCollectionName": "F", "features": [
                    {"type": "Bool", "name": "a", "default": "false"},
                    {"type": "Int", "name": "b", "default": "-3"},
                    {"type": "Float", "name": "c", "default": "0.5"},
                    {"type": "Double", "name": "d", "default": "12"},
                    {"type": "String", "name": "e", "default": ""}
                ]}
                """.utf8))
        #expect(declarations.configs.map(\.type) == [.bool, .int, .double, .double, .string])
        #expect(
            declarations.configs.map(\.defaultValue) == [
                .bool(false), .int(-3), .double(0.5), .double(12), .string(""),
            ])
        #expect(declarations.warnings.map(\.pointer.description) == ["/features"], "the @objc note only")
    }

    @Test("A String's default means what the generated Swift literal means; what would not compile is refused")
    func stringDefaultsAsSwiftLiterals() throws {
        func declared(_ text: String) throws -> ConfigValue? {
            let file =
                #"{"configCollectionName": "F", "features": [{"type": "String", "name": "s", "default": \#(text)}]}"#
            return try ConfigDeclarations.decode(Array(file.utf8)).configs.first?.defaultValue
        }
        #expect(try declared(#""Hello\\nWorld""#) == .string("Hello\nWorld"))
        #expect(try declared(#""say \\\"hi\\\"""#) == .string("say \"hi\""))
        #expect(try declared(#""C:\\\\temp""#) == .string("C:\\temp"))
        #expect(try declared(#""caf\\u{E9}""#) == .string("café"))
        #expect(try declared(#""plain""#) == .string("plain"))
        for bad in [#""say \"hi\"""#, #""a\\qb""#, #""\\(name)""#, #""line\nbreak""#, #""\\u{zz}""#] {
            #expect(throws: ConfigsRefused.self, "\(bad)") { try declared(bad) }
        }
    }

    @Test(
        "Two features that name one config are refused at the second's name or key",
        arguments: [
            Input(
                #"{"type": "Bool", "name": "shown", "default": "true"}, {"type": "Int", "name": ‸"shown", "default": "1"}"#
            ),
            Input(
                #"{"type": "Bool", "name": "shown", "default": "true"}, {"type": "Int", "name": "count", "key": ‸"shown", "default": "1"}"#
            ),
            Input(
                #"{"type": "Bool", "name": "a", "key": "shown", "default": "true"}, {"type": "Int", "name": "b", "key": ‸"shown", "default": "1"}"#
            ),
            // One name to the app: Swift compares strings by canonical equivalence.
            Input(
                #"{"type": "Bool", "name": "a", "key": "caf\u00e9", "default": "true"}, {"type": "Int", "name": "b", "key": ‸"cafe\u0301", "default": "1"}"#
            ),
        ])
    func duplicateConfigs(features: Input) throws {
        let issues = try refusal(#"{"configCollectionName": "F", "features": ["# + features.text + "]}")
        let error = try #require(issues.errors.only)
        #expect(error.location == issues.marks[0])
        #expect(error.message.contains("already declared at /features/0"))
        #expect(error.pointer.description.hasPrefix("/features/1/"))
    }

    @Test("Two features that declare one property are refused, whatever their keys")
    func duplicateProperties() throws {
        let issues = try refusal(
            #"{"configCollectionName": "F", "features": [{"type": "Bool", "name": "shown", "key": "a", "default": "true"}, "#
                + #"{"type": "Bool", "name": ‸"shown", "key": "b", "default": "true"}]}"#)
        let error = try #require(issues.errors.only)
        #expect(error.location == issues.marks[0])
        #expect(error.pointer == JSONPointer.root.appending("features").appending(1).appending("name"))
        #expect(error.message.contains("property \"shown\""))
    }

    @Test(
        "A feature without a type, a known type, a name or a default is refused where it goes wrong",
        arguments: [
            Input(#"‸{"name": "a", "default": "true"}"#),
            Input(#"{"type": ‸"NSDate", "name": "a", "default": "true"}"#),
            Input(#"{"type": ‸"bool", "name": "a", "default": "true"}"#),
            Input(#"{"type": ‸true, "name": "a", "default": "true"}"#),
            Input(#"‸{"type": "Bool", "default": "true"}"#),
            Input(#"{"type": "Bool", "name": ‸"", "default": "true"}"#),
            Input(#"{"type": "Bool", "name": "a", "key": ‸null, "default": "true"}"#),
            Input(#"‸{"type": "Bool", "name": "a"}"#),
            Input(#"{"type": "Bool", "name": "a", "default": ‸true}"#),
            Input(#"{"type": "Int", "name": "a", "default": ‸12}"#),
            Input(#"{"type": "Bool", "name": "a", "default": "true", "doc": ‸["no"]}"#),
            Input(#"‸"a""#),
        ])
    func incompleteFeature(feature: Input) throws {
        let issues = try refusal(#"{"configCollectionName": "F", "features": ["# + feature.text + "]}")
        let error = try #require(issues.errors.only)
        #expect(error.location == issues.marks[0])
        #expect(error.pointer.description.hasPrefix("/features/0"))
        #expect(!error.fix.isEmpty)
    }

    @Test("Every broken feature is reported, not only the first")
    func everyProblem() throws {
        let issues = try refusal(
            """
            {"configCollectionName": "F", "features": [
                {"type": ‸"Date", "name": "a", "default": "x"},
                {"type": "Int", "name": "b", "default": ‸"one"},
                {"type": "Int", "name": "c", "default": "1"},
                ‸{"type": "Int", "default": ‸42}
            ]}
            """)
        #expect(issues.errors.compactMap(\.location) == issues.marks)
    }

    @Test(
        "Only commas before a closing bracket are forgiven: the rest must be strict JSON",
        arguments: [
            // A comment, as a hand-edited file may hold.
            Input(
                """
                {"configCollectionName": "F", "features": [
                    ‸// the main switch
                    {"type": "Bool", "name": "a", "default": "true"},
                ]}
                """),
            Input(#"{"configCollectionName": "F", "features": [‸,]}"#),
            Input(#"{"configCollectionName": "F", "features": [{"type": "Bool", "name": "a", "default": "true"},‸,]}"#),
            Input(#"{"configCollectionName": "F", "features": [{"type": "Bool", "name": "a", "default":‸,}]}"#),
            Input(#"{"configCollectionName": ‸'F', "features": []}"#),
            Input(#"{"configCollectionName": "F", "features": []}‸,"#),
        ])
    func strictOtherwise(text: Input) throws {
        let issues = try refusal(text.text)
        let error = try #require(issues.errors.only)
        #expect(error.location == issues.marks[0])
    }

    @Test("A comma inside a string is text, not a trailing comma (a quote in a String's default is escaped twice)")
    func commaInString() throws {
        let declarations = try ConfigDeclarations.decode(
            Array(
                #"{"configCollectionName": "F", "features": [{"type": "String", "name": "a", "default": "x,}\\\",]"}]}"#
                    .utf8))
        #expect(declarations.configs.map(\.defaultValue) == [.string("x,}\",]")])
        #expect(declarations.warnings.allSatisfy { $0.message.contains("@objcMembers") })
    }

    @Test("Unknown keys and a missing collection name are warnings: the generator goes on without them")
    func warnings() throws {
        let (text, marks) = TestSupport.strippingMarkers(
            #"‸{"features": [{"type": "Bool", "name": "a", ‸"kye": "b", "default": "true"}], ‸"version": 2}"#)
        let declarations = try ConfigDeclarations.decode(Array(text.utf8))
        #expect(declarations.collectionName == nil)
        #expect(declarations.configs.map(\.name) == ["a"])
        let generatorWarnings = declarations.warnings.filter { !$0.message.contains("@objcMembers") }
        #expect(
            generatorWarnings.compactMap(\.location).sorted { ($0.line, $0.column) < ($1.line, $1.column) } == marks)
        #expect(declarations.warnings.allSatisfy { $0.severity == .warning })
    }

    @Test("A file that is not a declaration file is refused at its root", arguments: ["‸[]", #"{"features": ‸{}}"#])
    func notADeclarationFile(text: String) throws {
        let issues = try refusal(text)
        #expect(issues.errors.compactMap(\.location) == issues.marks)
    }

    // MARK: Helpers

    /// The issues of a refused file, written with markers where each error must be located.
    private func refusal(
        _ marked: String, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws -> (all: [ConfigIssue], errors: [ConfigIssue], marks: [Position]) {
        let (text, marks) = TestSupport.strippingMarkers(marked)
        do {
            let declarations = try ConfigDeclarations.decode(Array(text.utf8))
            Issue.record("accepted: \(declarations.configs)", sourceLocation: sourceLocation)
            return ([], [], marks)
        } catch {
            return (error.issues, error.issues.filter { $0.severity == .error }, marks)
        }
    }
}

extension TestSupport {
    /// `Tests/Fixtures/swiftfeatureconfigs`: files of dallasjohnson/SwiftFeatureConfigs, unchanged.
    static let swiftFeatureConfigsDirectory: URL =
        realFixturesDirectory
        .deletingLastPathComponent()
        .appendingPathComponent("swiftfeatureconfigs")

    /// The bytes of a SwiftFeatureConfigs fixture.
    static func swiftFeatureConfigsFixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: swiftFeatureConfigsDirectory.appendingPathComponent(name)))
    }
}
