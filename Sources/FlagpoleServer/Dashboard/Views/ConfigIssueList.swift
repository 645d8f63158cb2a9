import FlagpoleCore

/// The problems of a refused config as the config page lists them: message, JSON pointer and
/// fix, each also shown beside the field it points at.
struct ConfigIssueList: Sendable {
    struct Item: Sendable {
        var message: String
        /// Within the config: `/default`, `/values/Group B`, `/tags/0`; `nil` for the whole config.
        var pointer: String?
        var fix: String
    }

    var issues: [Item]
    /// Stored, not computed: templates see stored properties only.
    var hasIssues: Bool

    init(_ issues: [ConfigIssue] = []) {
        self.issues = issues.filter { $0.severity == .error }.map {
            // The store points into the one config it was given (`/default`).
            let pointer = $0.pointer.description
            return Item(message: $0.message, pointer: pointer.isEmpty ? nil : pointer, fix: $0.fix)
        }
        hasIssues = !self.issues.isEmpty
    }

    /// What the issues say of the field at `pointer` (`/default`), or of anything under it;
    /// `nil` when nothing.
    func message(at pointer: JSONPointer) -> String? {
        let field = pointer.description
        let messages = issues.filter { $0.pointer == field || $0.pointer?.hasPrefix(field + "/") == true }.map {
            "\($0.message); \($0.fix)."
        }
        return messages.isEmpty ? nil : messages.joined(separator: " ")
    }
}
