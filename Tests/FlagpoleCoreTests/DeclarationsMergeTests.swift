import FlagpoleCore
import Foundation
import Testing

/// Importing SwiftFeatureConfigs' declaration file again: a merge that keeps what the team set.
@Suite("Declaration imports merge")
struct DeclarationsMergeTests {
    static func declared(_ features: String) throws -> [Config] {
        try ConfigDeclarations.decode(Array(#"{"configCollectionName": "App", "features": [\#(features)]}"#.utf8))
            .configs
    }

    static let first = #"""
        {"type": "Int", "name": "cells", "default": "12", "doc": "How many cells"},
        {"type": "String", "name": "title", "default": "Hello"},
        {"type": "Float", "name": "scale", "default": "0.5"},
        {"type": "Bool", "name": "legacy", "default": "false"}
        """#

    @Test("The fixture imported twice: the second import plans nothing and changes nothing")
    func unchangedFileChangesNothing() throws {
        let declared = try ConfigDeclarations.decode(
            try TestSupport.swiftFeatureConfigsFixture("featureConfigs.json")
        )
        .configs
        let once = DeclarationsMerge(declared, into: ConfigsDocument())
        #expect(once.steps.count == 12 && once.steps.allSatisfy { $0.kind == .added })
        let twice = DeclarationsMerge(declared, into: once.document)
        #expect(twice.steps.isEmpty && twice.unchanged == 12)
        #expect(twice.document == once.document)
    }

    @Test("What the team set is kept; what nobody edited follows the declaration; each change is named")
    func keepsWhatTheTeamSet() throws {
        var document = DeclarationsMerge(try Self.declared(Self.first), into: ConfigsDocument()).document
        // The team edits cells, tags title and gives it a value per variation and a description.
        var cells = try #require(document.config(named: "cells"))
        cells.defaultValue = .int(20)
        document.set(cells)
        var title = try #require(document.config(named: "title"))
        title.tags = ["ios"]
        title.description = "The greeting"
        title.follows = "Onboarding"
        title.values = [Config.Variant(variation: "Group B", value: .string("Hi"))]
        document.set(title)
        let handMade = Config(name: "handMade", type: .bool, defaultValue: .bool(true))
        document.set(handMade)

        let second = #"""
            {"type": "Int", "name": "cells", "default": "14", "doc": "How many cells"},
            {"type": "String", "name": "title", "default": "Welcome", "doc": "Shown first"},
            {"type": "Float", "name": "scale", "default": "0.75", "doc": "Zoom"},
            {"type": "Double", "name": "ratio", "default": "1.5"}
            """#
        let merge = DeclarationsMerge(try Self.declared(second), into: document)
        let merged = merge.document
        #expect(merged.config(named: "cells")?.defaultValue == .int(20))
        #expect(merged.config(named: "cells")?.declaration?.defaultValue == .int(14))
        #expect(merged.config(named: "title")?.defaultValue == .string("Welcome"))
        #expect(merged.config(named: "title")?.tags == ["ios"])
        #expect(merged.config(named: "title")?.values.count == 1)
        #expect(merged.config(named: "title")?.description == "The greeting")
        #expect(merged.config(named: "scale")?.defaultValue == .double(0.75))
        #expect(merged.config(named: "scale")?.description == "Zoom")
        #expect(merged.config(named: "ratio")?.declaration?.type == .double)
        #expect(merged.config(named: "legacy")?.declaration?.isWithdrawn == true)
        #expect(merged.config(named: "legacy")?.defaultValue == .bool(false), "still served")
        #expect(merged.config(named: "handMade") == handMade, "a config no declaration made is left alone")
        #expect(merged.configs.map(\.name) == ["cells", "title", "scale", "legacy", "handMade", "ratio"])

        let steps = Dictionary(uniqueKeysWithValues: merge.steps.map { ($0.config, $0) })
        #expect(steps["cells"]?.details == ["keeps the team's default 20 (declared 12 → 14)"])
        #expect(steps["title"]?.details == [#"default "Hello" → "Welcome", as declared (nobody edited it)"#])
        #expect(
            steps["scale"]?.details == [
                "default 0.5 → 0.75, as declared (nobody edited it)", "description follows the doc",
            ])
        #expect(steps["ratio"]?.kind == .added)
        #expect(steps["legacy"]?.kind == .withdrawn)
        #expect(steps["handMade"] == nil)
        #expect(merge.unchanged == 0)
        // Importing the same file again changes nothing more.
        #expect(DeclarationsMerge(try Self.declared(second), into: merged).steps.isEmpty)
    }

    @Test("A changed type is a type change: the declared default, values and value rules dropped, and named")
    func typeChange() throws {
        var document = DeclarationsMerge(try Self.declared(Self.first), into: ConfigsDocument()).document
        var cells = try #require(document.config(named: "cells"))
        cells.follows = "Onboarding"
        cells.values = [Config.Variant(variation: "Group B", value: .int(30))]
        document.set(cells)
        let merge = DeclarationsMerge(
            try Self.declared(#"{"type": "String", "name": "cells", "default": "twelve"}"#), into: document)
        let step = try #require(merge.steps.first { $0.config == "cells" })
        #expect(step.kind == .retyped)
        #expect(step.details.contains { $0.contains("type int → string") && $0.contains("needs force") })
        let merged = try #require(merge.document.config(named: "cells"))
        #expect(merged.type == .string && merged.defaultValue == .string("twelve") && merged.values.isEmpty)
        // The store refuses it unless forced: installed apps read an Int.
        #expect(merged.declarationProblems(replacing: cells).first?.message.contains("as? Int") == true)
    }

    @Test(
        "A declaration on record refuses a change of type and a value its type doesn't hold, except the declared default"
    )
    func declarationProblems() throws {
        let document = DeclarationsMerge(
            try Self.declared(Self.first + #", {"type": "Float", "name": "zoom", "default": "12.4"}"#),
            into: ConfigsDocument()
        ).document
        let cells = try #require(document.config(named: "cells"))
        var retyped = cells
        retyped.type = .string
        retyped.defaultValue = .string("15")
        #expect(retyped.declarationProblems(replacing: cells).map(\.pointer.description) == ["/type"])
        let scale = try #require(document.config(named: "scale"))
        var inexact = scale
        inexact.defaultValue = .double(0.1)
        #expect(inexact.declarationProblems(replacing: scale).map(\.pointer.description) == ["/default"])
        var exact = scale
        exact.defaultValue = .double(0.25)
        #expect(exact.declarationProblems(replacing: scale).isEmpty)
        // The Float fixture's own 12.4 is what the app compiled in: served, skipped, the same value.
        let zoom = try #require(document.config(named: "zoom"))
        #expect(zoom.declarationProblems(replacing: nil).isEmpty)
        // A config no declaration made may change type.
        let free = Config(name: "free", type: .int, defaultValue: .int(1))
        var freeString = free
        freeString.type = .string
        freeString.defaultValue = .string("1")
        #expect(freeString.declarationProblems(replacing: free).isEmpty)
    }

    @Test("The declaration is part of the configs file: written, read back, and refused when malformed")
    func declarationRoundTrip() throws {
        let document = DeclarationsMerge(try Self.declared(Self.first), into: ConfigsDocument()).document
        let bytes = document.rendered()
        #expect(String(decoding: bytes, as: UTF8.self).contains(#""declared": {"type": "Float", "default": 0.5}"#))
        #expect(try ConfigsDecoder.decode(bytes).0 == document)
        let bad =
            #"{"configs": [{"name": "a", "type": "int", "default": 1, "declared": {"type": "Integer", "default": 1}}]}"#
        #expect(throws: ConfigsRefused.self) { try ConfigsDecoder.decode(Array(bad.utf8)) }
    }
}
