import FlagpoleStore
import Hummingbird

/// What a form did, carried to the page the browser is sent to after it (`?notice=…`), so
/// reloading that page shows the result without posting again. Only known notices are shown:
/// a crafted link can't put words on the page.
struct Notice: Sendable {
    enum Kind: String, Sendable {
        case applied, unchanged
        case overrideSet = "override-set"
        case overrideCleared = "override-cleared"
        case configExists = "config-exists"
        case keyRevoked = "key-revoked"
        case environmentCreated = "environment-created"
        case environmentSaved = "environment-saved"
        case goalCreated = "goal-created"
        case rampChanged = "ramp-changed"
        case triggerRevoked = "trigger-revoked"
        case webhookRevoked = "webhook-revoked"
        case roleChanged = "role-changed"
        case memberRemoved = "member-removed"
        case passwordChanged = "password-changed"
        case sessionEnded = "session-ended"
        case controlNamed = "control-named"
        case controlCleared = "control-cleared"
    }

    var kind: Kind
    var revision: Int?

    init(_ kind: Kind, revision: Int? = nil) {
        self.kind = kind
        self.revision = revision
    }

    init(_ outcome: EditOutcome) {
        self.init(outcome.isApplied ? .applied : .unchanged, revision: outcome.revision)
    }

    init(_ outcome: ConfigsOutcome) {
        self.init(outcome.isApplied ? .applied : .unchanged, revision: outcome.revision)
    }

    /// The notice of a page's query, if any.
    init?(_ request: Request) {
        let query = request.uri.queryParameters
        guard let kind = query["notice"].flatMap({ Kind(rawValue: String($0)) }) else { return nil }
        self.init(kind, revision: query["revision"].flatMap { Int(String($0)) })
    }

    var text: String {
        switch kind {
        case .applied: "Applied as revision \(revision.map(String.init) ?? "?")."
        case .unchanged: "Nothing to change: the current revision already has this content."
        case .overrideSet: "The QA override is set: the user's app gets this variation from its next fetch."
        case .overrideCleared: "The QA override is cleared: the user is back in the group of their point."
        case .configExists: "A config of that name exists already: here it is."
        case .keyRevoked: "The key is revoked: it stopped working at once, and its sessions are signed out."
        case .environmentCreated: "The environment is created, with no revision until its first import."
        case .environmentSaved: "The environment's settings are saved: delivery follows them from its next request."
        case .goalCreated: "The goal is created: apps can send its events from now on."
        case .rampChanged: "Done: the timeline below shows the ramp as it is now."
        case .triggerRevoked: "The trigger is revoked: its URL does nothing from now on."
        case .webhookRevoked: "The webhook is revoked: nothing more is sent to it, and what was waiting is given up."
        case .roleChanged: "The role is changed: it applies at once, in the member's open sessions and keys too."
        case .memberRemoved: "The member is removed: their sessions ended and their keys here are revoked."
        case .passwordChanged: "Your password is changed, and your other sessions are signed out."
        case .sessionEnded: "That session is signed out."
        case .controlNamed: "The test's control is named: every readout compares with it from now on. No user moved."
        case .controlCleared: "The test is back on its default control. No user moved."
        }
    }

    /// `url` with the notice, and the fragment of the notice itself: the browser scrolls to it and
    /// focuses it, so the result is read out, whatever fragment the form's own address had
    /// (a redirect without one keeps the form's).
    func appended(to url: String) -> String {
        url + (url.contains("?") ? "&" : "?") + "notice=\(kind.rawValue)" + (revision.map { "&revision=\($0)" } ?? "")
            + "#notice"
    }
}
