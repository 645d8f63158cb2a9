import FlagpoleCore
import FlagpoleStore
import Foundation

extension Assignment {
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
    static let columns = [
        "time", "user", "feature", "previous_variation", "variation", "point", "revision", "reason", "id", "rule",
    ]

    var cells: [String] {
        [
            time.iso8601Milliseconds, user.rawValue, feature, previousVariation ?? "", variation,
            JSONWriter.format(point), String(revision), reason.rawValue, String(id), rule ?? "",
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
