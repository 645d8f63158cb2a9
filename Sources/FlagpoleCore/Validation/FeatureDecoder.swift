/// Decodes one feature object as the client's `Feature.init(from:)` does, reporting every
/// key the client would refuse (E110–E113) instead of stopping at the first.
enum FeatureDecoder {
    /// The feature, or `nil` when the client would refuse it (the diagnostics say why).
    static func decode(_ node: JSONNode, at pointer: JSONPointer, pending: inout PendingDiagnostics) -> Feature? {
        guard case .object(let members) = node.content else {
            pending.add(
                .featureNotAnObject, feature: nil, at: pointer, offset: node.offset,
                "this feature is \(node.value.summary), not an object; the app rejects the whole file",
                fix: "write each feature as an object such as {\"name\": \"My Feature\", \"enabled\": true}")
            return nil
        }
        // The reader takes the diagnostics over: shared with `pending`, its first addition would
        // copy every diagnostic so far, for each feature of a file with many bad ones.
        var reader = MemberReader(pointer: pointer, pending: pending)
        pending = PendingDiagnostics()
        defer { pending = reader.pending }

        let nameMember = members.first { $0.key == "name" }
        switch nameMember?.node.content {
        case .string(let name):
            reader.featureName = name
            if name.containsNUL { reader.refuseNUL(nameMember!.node, at: pointer.appending("name")) }
        case nil, .null:
            reader.pending.add(
                .missingName, feature: nil, at: pointer.appending("name"),
                offset: nameMember?.node.offset ?? node.offset,
                "this feature has no \"name\"; the app rejects the whole file",
                fix: "add \"name\": \"…\" (lookups are exact and case-sensitive)")
        case .some:
            reader.pending.add(
                .missingName, feature: nil, at: pointer.appending("name"), offset: nameMember!.node.offset,
                "\"name\" is \(nameMember!.node.value.summary), not a string; the app rejects the whole file",
                fix: "write the name in double quotes")
        }

        var feature = Feature(name: reader.featureName ?? "")
        for member in members {
            let node = member.node
            if case .null = node.content, member.key != "name" {
                // The client reads null as absent; unknown keys keep theirs.
                if !Feature.knownKeys.contains(member.key) && member.key != Feature.assignmentKey {
                    feature.unknownKeys.append(member.key, .null)
                }
                continue
            }
            switch member.key {
            case "name":
                continue
            case "description":
                feature.description = reader.string(node, key: member.key)
            case "section":
                feature.section = reader.string(node, key: member.key)
            case "development":
                feature.development = reader.bool(node, key: member.key)
            case "enabled":
                feature.enabled = reader.bool(node, key: member.key)
            case "unlocked":
                feature.unlocked = reader.bool(node, key: member.key)
            case "type":
                feature.type = reader.typeObject(node)
            case "test-variations":
                feature.testVariations = reader.strings(node, key: member.key)
            case "test-biases":
                feature.testBiases = reader.numbers(node, key: member.key)
            case "labels":
                feature.labels = reader.labels(node, key: member.key)
            case Feature.assignmentKey:
                if reader.number(node, key: member.key) != nil {
                    reader.pending.add(
                        .assignmentDropped, feature: reader.featureName, at: pointer.appending(member.key),
                        offset: node.offset,
                        "\"\(member.key)\" in a shared file would pin every fresh install to one group; the store does not keep it",
                        fix: "remove it: Flagpole serves each user's own point in their pinned document")
                }
            default:
                feature.unknownKeys.append(member.key, node.value)
            }
        }
        return reader.featureName != nil && !reader.hasFailed ? feature : nil
    }
}

/// Reads the values of a feature's known keys, reporting wrong JSON types (E112, E113).
private struct MemberReader {
    let pointer: JSONPointer
    var pending: PendingDiagnostics
    var featureName: String?
    var hasFailed = false

    init(pointer: JSONPointer, pending: PendingDiagnostics) {
        self.pointer = pointer
        self.pending = pending
    }

    mutating func string(_ node: JSONNode, key: String) -> String? {
        if case .string(let value) = node.content {
            if value.containsNUL { refuseNUL(node, at: pointer.appending(key)) }
            return value
        }
        wrongType(
            node, at: pointer.appending(key), key: key, expected: "a string", fix: "write the text in double quotes")
        return nil
    }

    mutating func bool(_ node: JSONNode, key: String) -> Bool? {
        if case .bool(let value) = node.content { return value }
        wrongType(
            node, at: pointer.appending(key), key: key, expected: "true or false",
            fix: "write true or false, without quotes")
        return nil
    }

    mutating func number(_ node: JSONNode, key: String) -> Double? {
        if case .number(let value) = node.content { return value }
        wrongType(
            node, at: pointer.appending(key), key: key, expected: "a number", fix: "write a number without quotes")
        return nil
    }

    mutating func strings(_ node: JSONNode, key: String) -> [String]? {
        elements(node, key: key, expected: "an array of strings", example: "[\"Group A\", \"Group B\"]") { element in
            if case .string(let value) = element.content { return value }
            return nil
        } elementFix: { _ in
            "write each variation as a string in double quotes"
        }
    }

    mutating func numbers(_ node: JSONNode, key: String) -> [Double]? {
        elements(node, key: key, expected: "an array of numbers", example: "[50, 50]") { element in
            if case .number(let value) = element.content { return value }
            return nil
        } elementFix: { _ in
            "write each bias as a number without quotes"
        }
    }

    mutating func labels(_ node: JSONNode, key: String) -> [String?]? {
        elements(node, key: key, expected: "an array of strings or nulls", example: "[\"label-a\", null]") {
            element -> String?? in
            switch element.content {
            case .string(let value): return .some(value)
            case .null: return .some(nil)
            default: return nil
            }
        } elementFix: { _ in
            "write each label as a string, or null for none"
        }
    }

    /// An array whose every element `read` accepts; one diagnostic per bad element.
    mutating func elements<Element>(
        _ node: JSONNode, key: String, expected: String, example: String,
        read: (JSONNode) -> Element?, elementFix: (JSONNode) -> String
    ) -> [Element]? {
        let keyPointer = pointer.appending(key)
        guard case .array(let nodes) = node.content else {
            wrongType(node, at: keyPointer, key: key, expected: expected, fix: "write \"\(key)\": \(example)")
            return nil
        }
        var values: [Element] = []
        var isValid = true
        for (index, element) in nodes.enumerated() {
            if let value = read(element) {
                values.append(value)
            } else {
                isValid = false
                hasFailed = true
                pending.add(
                    .wrongType, feature: featureName, at: keyPointer.appending(index), offset: element.offset,
                    "element \(index) of \"\(key)\" is \(element.value.summary), but \"\(key)\" must be \(expected); the app rejects the whole file",
                    fix: elementFix(element))
            }
        }
        if case .array(let nodes) = node.content {
            for (index, element) in nodes.enumerated() {
                if case .string(let text) = element.content, text.containsNUL {
                    refuseNUL(element, at: keyPointer.appending(index))
                }
            }
        }
        return isValid ? values : nil
    }

    /// E114: the store keeps these strings as SQLite text, which ends at the first U+0000.
    mutating func refuseNUL(_ node: JSONNode, at pointer: JSONPointer) {
        hasFailed = true
        pending.add(
            .nulCharacter, feature: featureName, at: pointer, offset: node.offset,
            "this text contains the NUL character (U+0000): the app accepts it, but Flagpole cannot store it without cutting the text short",
            fix: "remove the \\u0000")
    }

    mutating func typeObject(_ node: JSONNode) -> JSONObject? {
        let typePointer = pointer.appending("type")
        let accepted =
            "the app accepts only {\"feature-flag\": \"…\"} or {\"feature-test\": \"ab\" | \"featureFlagAB\" | \"mvt\"}"
        guard case .object = node.content, case .object(let object) = node.value else {
            invalidType(
                node, at: typePointer, "\"type\" is \(node.value.summary); \(accepted)",
                fix: "write \"type\": {\"feature-test\": \"ab\"}, or remove \"type\" to let the variations decide")
            return nil
        }
        guard FeatureType(object) == nil else { return object }
        if object["unlock-flag"] != nil {
            invalidType(
                node, at: typePointer, "the app has no {\"unlock-flag\": …} type object; it rejects the whole file",
                fix: "remove \"type\" and write \"unlocked\": false to make an unlock flag")
        } else if case .string(let raw) = object["feature-test"], let kind = node.member("feature-test")?.node {
            invalidType(
                kind, at: typePointer.appending("feature-test"),
                "\"feature-test\" is \"\(raw)\", an unknown test kind; the app rejects the whole file",
                fix: "use \"ab\", \"featureFlagAB\" or \"mvt\" (case-sensitive)")
        } else {
            invalidType(
                node, at: typePointer, "this \"type\" object is not one the app accepts: \(accepted)",
                fix: "write \"type\": {\"feature-flag\": \"flag\"} or {\"feature-test\": \"ab\"}")
        }
        return nil
    }

    private mutating func invalidType(_ node: JSONNode, at pointer: JSONPointer, _ message: String, fix: String) {
        hasFailed = true
        pending.add(.invalidTypeObject, feature: featureName, at: pointer, offset: node.offset, message, fix: fix)
    }

    private mutating func wrongType(
        _ node: JSONNode, at pointer: JSONPointer, key: String, expected: String, fix: String
    ) {
        hasFailed = true
        pending.add(
            .wrongType, feature: featureName, at: pointer, offset: node.offset,
            "\"\(key)\" is \(node.value.summary), but it must be \(expected); the app rejects the whole file",
            fix: fix)
    }
}

extension String {
    /// Whether the text holds U+0000 (checked before building a pointer: this runs for every string).
    var containsNUL: Bool { utf8.contains(0) }
}
