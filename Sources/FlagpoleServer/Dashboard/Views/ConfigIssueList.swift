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
            let pointer = Self.withinConfig($0.pointer)
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

    /// `pointer` within the config: the store points at the config in the environment's whole
    /// configs file (`/configs/3/default`), the editor at its own fields (`/default`).
    static func withinConfig(_ pointer: JSONPointer) -> String {
        let parts = pointer.description.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0].isEmpty, parts[1] == "configs", parts[2].allSatisfy(\.isNumber) else {
            return pointer.description
        }
        return parts.count == 4 ? "/" + parts[3] : ""
    }
}
