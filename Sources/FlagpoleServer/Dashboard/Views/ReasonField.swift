import FlagpoleStore
import Foundation

/// The reason a person gives for a change: an input on every form that applies one, kept as
/// the revision's message and shown in the feature's history. Optional, unless the environment
/// asks for one (`EnvironmentMarking.requiresReason`); without one, the message says what changed.
struct ReasonField: Sendable {
    /// The input's id, unique on its page.
    var id: String
    /// What was typed, kept while the change is previewed.
    var text: String
    /// The environment refuses changes without one. Not the input's `required`: a preview,
    /// sent by the same form, needs none.
    var isRequired: Bool
    /// Why applying was refused for want of a reason, said beside the field. (Named so that
    /// no page's own field answers for it in the template.)
    var missingReason: String?

    init(id: String, text: String?, isRequired: Bool = false, missingReason: String? = nil) {
        self.id = id
        self.text = text ?? ""
        self.isRequired = isRequired
        self.missingReason = missingReason
    }

    /// What the field says when the store refused a change for want of a reason.
    static func missing(in path: EnvironmentPath) -> String {
        "\(path) asks a reason for every change: nothing was written. Say here what this change is for, then apply again."
    }

    /// The revision's message for `reason` as sent: `nil` (the store's own) when it is blank.
    static func message(_ reason: String?) -> String? {
        guard let trimmed = reason?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else {
            return nil
        }
        return trimmed
    }
}
