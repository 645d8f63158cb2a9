import FlagpoleCore
import Testing

/// The audit trail of a revision: what changed between two documents, field by field.
@Suite("Document diff")
struct DocumentDiffTests {
    static func document(_ text: String) throws -> FeaturesDocument {
        let decoded = TestSupport.decode(text)
        #expect(decoded.isValid, "\(decoded.diagnostics)")
        return try #require(decoded.document)
    }

    @Test("Added, removed and changed features and fields")
    func addedRemovedChanged() throws {
        let old = try Self.document(
            #"""
            {"v": 1, "features": [
                {"name": "a", "enabled": false, "section": "S", "x": 1},
                {"name": "b"},
                {"name": "c", "test-variations": ["A", "B"]}
            ]}
            """#)
        let new = try Self.document(
            #"""
            {"v": 2, "features": [
                {"name": "a", "description": "D", "enabled": true, "x": 2},
                {"name": "c", "test-variations": ["A", "B"]},
                {"name": "d", "enabled": true}
            ], "w": true}
            """#)
        let diff = DocumentDiff(from: old, to: new)
        #expect(!diff.isEmpty)
        #expect(diff.addedFeatures == ["d"])
        #expect(diff.removedFeatures == ["b"])
        #expect(diff.changedFeatures == ["a"])

        let a = diff.changes.filter { $0.feature == "a" }
        let byField = Dictionary(uniqueKeysWithValues: a.map { ($0.field ?? "", $0) })
        #expect(Set(byField.keys) == ["description", "enabled", "section", "x"])
        #expect(byField["description"]?.kind == .added)
        #expect(byField["description"]?.before == nil)
        #expect(byField["description"]?.after == .string("D"))
        #expect(byField["enabled"]?.kind == .changed)
        #expect(byField["enabled"]?.before == .bool(false))
        #expect(byField["enabled"]?.after == .bool(true))
        #expect(byField["section"]?.kind == .removed)
        #expect(byField["section"]?.before == .string("S"))
        #expect(byField["section"]?.after == nil)
        #expect(byField["x"]?.kind == .changed)
        #expect(byField["x"]?.after == .number(2))

        let added = try #require(diff.changes.first { $0.feature == "d" })
        #expect(added.kind == .added)
        #expect(added.field == nil)
        #expect(added.before == nil)
        #expect(added.after == .object(["name": .string("d"), "enabled": .bool(true)]))

        let removed = try #require(diff.changes.first { $0.feature == "b" })
        #expect(removed.kind == .removed)
        #expect(removed.field == nil)
        #expect(removed.before == .object(["name": .string("b")]))
        #expect(removed.after == nil)

        // The document's own keys.
        let own = diff.changes.filter { $0.feature == nil }
        #expect(own.count == 2)
        #expect(
            own.contains { $0.field == "v" && $0.kind == .changed && $0.before == .number(1) && $0.after == .number(2) }
        )
        #expect(own.contains { $0.field == "w" && $0.kind == .added && $0.after == .bool(true) })
        // c did not change, and the survivors kept their order.
        #expect(!diff.changes.contains { $0.feature == "c" })
        #expect(!diff.changes.contains { $0.field == "features" })
        #expect(diff.changes.count == 4 + 1 + 1 + 2)
    }

    @Test("Re-ordering features is a change of the features field")
    func reordered() throws {
        let old = try Self.document(#"[{"name": "a"}, {"name": "b"}, {"name": "c"}]"#)
        let new = try Self.document(#"[{"name": "c"}, {"name": "a"}, {"name": "b"}]"#)
        let diff = DocumentDiff(from: old, to: new)
        let change = try #require(diff.changes.only)
        #expect(change.feature == nil)
        #expect(change.field == "features")
        #expect(change.kind == .changed)
        #expect(change.before == .array([.string("a"), .string("b"), .string("c")]))
        #expect(change.after == .array([.string("c"), .string("a"), .string("b")]))
        #expect(diff.changedFeatures.isEmpty)
    }

    @Test("Variation and bias changes are reported with their values")
    func variationChanges() throws {
        let old = try Self.document(#"[{"name": "t", "test-variations": ["A", "B"], "test-biases": [10, 90]}]"#)
        let new = try Self.document(#"[{"name": "t", "test-variations": ["A", "B"], "test-biases": [20, 80]}]"#)
        let change = try #require(DocumentDiff(from: old, to: new).changes.only)
        #expect(change.feature == "t")
        #expect(change.field == "test-biases")
        #expect(change.kind == .changed)
        #expect(change.before == .array([.number(10), .number(90)]))
        #expect(change.after == .array([.number(20), .number(80)]))
    }

    @Test("Identical documents, or a document and its own export, have no diff")
    func noChange() throws {
        let text =
            #"{"x": [1], "features": [{"name": "a", "unknown": {"k": null}}, {"name": "b", "labels": [null, "l"]}]}"#
        let document = try Self.document(text)
        #expect(DocumentDiff(from: document, to: document).isEmpty)
        let exported = try #require(DocumentDecoder.decode(document.rendered()).document)
        #expect(DocumentDiff(from: document, to: exported).isEmpty)
        #expect(DocumentDiff(from: FeaturesDocument(features: []), to: FeaturesDocument(features: [])).isEmpty)
    }

    @Test("A diff from nothing adds every feature, to nothing removes every one")
    func fromAndToNothing() throws {
        let document = try Self.document(#"[{"name": "a"}, {"name": "b"}]"#)
        let empty = FeaturesDocument(features: [])
        #expect(DocumentDiff(from: empty, to: document).addedFeatures == ["a", "b"])
        #expect(DocumentDiff(from: document, to: empty).removedFeatures == ["a", "b"])
        #expect(DocumentDiff(from: document, to: empty).changedFeatures.isEmpty)
    }
}
