import FlagpoleCore
import FlagpoleStore
import Foundation

/// The results page of a test: a control picker, the epochs with data (newest first) each with
/// its verdicts, the empty epochs in one list saying why they are empty, and the pooled estimates.
struct ResultsPage: Sendable {
    struct Choice: Sendable {
        var variation: String
        var isSelected: Bool
    }

    /// An epoch no user joined yet, and why.
    struct EmptyEpoch: Sendable {
        var number: Int
        var revision: Int
        var startedAt: ShownTime
        var reason: String
    }

    struct Pooled: Sendable {
        var goal: String
        var epochs: String
        var lines: [String]
    }

    /// The form that rolls a winner out, shown to editors on the newest epoch with data.
    struct Rollout: Sendable {
        var url: String
        var csrf: String
    }

    /// An editor's forms that name the control shown as the test's own, or go back to the default.
    struct ControlForm: Sendable {
        var controlURL: String
        var controlCSRF: String
        /// The control shown, when it is not yet the test's own.
        var proposedControl: String?
        var canClearControl: Bool
    }

    var chrome: Chrome
    var name: String
    var featureURL: String
    var minimumUsers = Experiments.minimumUsers
    var choices: [Choice]
    var error: String?
    var epochs: [ResultsEpoch] = []
    var emptyEpochs: [EmptyEpoch] = []
    var hasEmptyEpochs = false
    var hasEpochs = false
    var pooled: [Pooled] = []
    var rollout: Rollout?
    /// Which control the readout uses, and why that one.
    var controlNote: String
    var controlForm: ControlForm?
    /// Said when the test has ended (rolled out into a plain flag): the figures no longer change.
    var finalNote: String?

    /// The page of `results` against `control` (the default when `nil`); `error` instead of the
    /// figures when the control asked for is none.
    init(
        chrome: Chrome, results: ExperimentResults, control: String?, featureURL: String, rollout: Rollout?,
        controlForm: ControlForm?, error: String?, now: Date
    ) {
        self.chrome = chrome
        name = results.feature
        self.featureURL = featureURL
        self.error = error
        if results.isFinal {
            finalNote =
                "Final results: \(results.feature) is no longer a test (it was rolled out), so these figures stopped changing when it ended. They stay here as the evidence of the decision."
        }
        // The one asked for, which an older epoch may show though the newest lacks it.
        let asked = control
        let control = asked ?? results.epochs.last?.control
        choices = Self.variations(of: results).map { Choice(variation: $0, isSelected: $0 == control) }
        let named = results.namedControl
        controlNote =
            switch control {
            case nil: "No epoch yet, so no control."
            case let shown? where shown == named: "\(shown) is this test's control: its readouts compare with it."
            case let shown? where asked == nil:
                "\(shown) is the default control (Disabled in an on/off test, else the first variation)."
            case let shown?:
                "Compared with \(shown) this time" + (named.map { "; the test's control is \($0)." } ?? ".")
            }
        if var form = controlForm, !results.isFinal, let shown = control {
            form.proposedControl = shown == named ? nil : shown
            form.canClearControl = named != nil
            self.controlForm = form
        }
        guard error == nil else { return }
        hasEpochs = !results.epochs.isEmpty
        let epochs = results.epochs
        // When the app reports exposures, an epoch no user was exposed in has nothing to read:
        // its intention-to-treat fallback would count users moved in who never saw the change.
        let reportsExposure = epochs.contains { $0.arms.contains { $0.exposedUsers > 0 } }
        for (index, epoch) in epochs.enumerated().reversed() {
            let next = epochs.indices.contains(index + 1) ? epochs[index + 1] : nil
            let counted = epoch.arms.reduce(0) { $0 + (reportsExposure ? $1.exposedUsers : $1.users) }
            if counted == 0 {
                emptyEpochs.append(
                    EmptyEpoch(
                        number: epoch.number, revision: epoch.revision, startedAt: ShownTime(epoch.startedAt),
                        reason: Self.whyEmpty(
                            epoch, previous: index > 0 ? epochs[index - 1] : nil, reportsExposure: reportsExposure)))
            } else {
                self.epochs.append(ResultsEpoch(epoch, next: next, now: now))
            }
        }
        hasEmptyEpochs = !emptyEpochs.isEmpty
        // Only the newest epoch with data decides what to roll out now.
        if rollout != nil, !results.isFinal, let newest = self.epochs.first,
            newest.verdicts.contains(where: { $0.winner != nil })
        {
            self.rollout = rollout
            self.epochs[0].canRollOut = true
        }
        pooled = results.pooled.map { pooled in
            Pooled(
                goal: pooled.goal, epochs: pooled.epochs.map(String.init).joined(separator: ", "),
                lines: pooled.variations.map { variation, estimate in
                    "\(variation): \(ResultsFormat.signed(estimate.difference)) \(ResultsFormat.interval(estimate.interval)), p = \(ResultsFormat.pValue(estimate.pValue))"
                })
        }
    }

    /// Every variation of the test's epochs, newest epoch's first: what the control can be.
    static func variations(of results: ExperimentResults) -> [String] {
        var seen: [String] = []
        for epoch in results.epochs.reversed() {
            for variation in epoch.variations where !seen.contains(variation) { seen.append(variation) }
        }
        return seen
    }

    /// What changed when `epoch` began, from how it differs from the one before, and who is in it.
    private static func whyEmpty(_ epoch: EpochResults, previous: EpochResults?, reportsExposure: Bool) -> String {
        let change =
            switch previous {
            case nil: "since the test began"
            case let previous? where previous.variations != epoch.variations: "since the variations changed"
            case let previous? where previous.shares != epoch.shares: "since the biases changed"
            default: "since the rules, their segments or the test's state changed"
            }
        let users = epoch.arms.reduce(0) { $0 + $1.users }
        guard reportsExposure else { return "no user joined yet \(change); users join as apps fetch their group" }
        return "no user exposed yet \(change)"
            + (users > 0
                ? "; its \(users.grouped) user\(users == 1 ? " was" : "s were") moved in by the change and count once their app reports an exposure"
                : "")
    }
}
