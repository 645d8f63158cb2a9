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

    init(id: String, text: String?, isRequired: Bool = false) {
        self.id = id
        self.text = text ?? ""
        self.isRequired = isRequired
    }

    /// The revision's message for `reason` as sent: `nil` (the store's own) when it is blank.
    static func message(_ reason: String?) -> String? {
        guard let trimmed = reason?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else {
            return nil
        }
        return trimmed
    }
}
