import FlagpoleCore
import FlagpoleStore
import Foundation

extension Assignment {
    /// `{"user", "feature", "variation", "point", "revision"}`, plus `"override": true` under a QA override.
    var jsonValue: JSONValue {
        var object: JSONObject = [
            "user": .string(user.rawValue),
            "feature": .string(feature),
            "variation": .string(variation),
            "point": .number(point),
            "revision": .number(Double(revision)),
        ]
        if isOverride { object.append("override", .bool(true)) }
        return .object(object)
    }

    /// `user  variation  point`, tab-separated, for many users.
    var line: String {
        "\(user)\t\(variation)\t\(JSONWriter.format(point))\(isOverride ? "\toverride" : "")"
    }

    /// A sentence, for one user.
    var sentence: String {
        "\(user) is in \"\(variation)\" of \(feature)\(isOverride ? " (QA override)" : "") · point \(JSONWriter.format(point)) · revision \(revision)"
    }
}

extension AssignmentEvent {
    static let columns = ["time", "user", "feature", "previous_variation", "variation", "point", "revision", "reason", "id"]

    var cells: [String] {
        [time.iso8601Milliseconds, user.rawValue, feature, previousVariation ?? "", variation, JSONWriter.format(point), String(revision), reason.rawValue, String(id)]
    }

    var jsonValue: JSONValue {
        [
            "id": .number(Double(id)),
            "time": .string(time.iso8601Milliseconds),
            "user": .string(user.rawValue),
            "feature": .string(feature),
            "previousVariation": previousVariation.map(JSONValue.string) ?? .null,
            "variation": .string(variation),
            "point": .number(point),
            "revision": .number(Double(revision)),
            "reason": .string(reason.rawValue),
        ]
    }
}

/// RFC 4180 CSV: fields with a comma, a quote or a line break are quoted, quotes doubled.
enum CSV {
    static func row(_ cells: [String]) -> String {
        cells.map { cell in
            guard cell.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return cell }
            return "\"" + cell.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }.joined(separator: ",")
    }
}
