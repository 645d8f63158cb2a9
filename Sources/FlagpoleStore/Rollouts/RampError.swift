import FlagpoleCore
import Foundation

/// Why a ramp could not be made or changed, worded for the person who can fix it.
public enum RampError: FlagpoleError, Equatable {
    /// Only a variation at either end grows without moving users between the others.
    case middleVariation(feature: String, variation: String, variations: [String])
    case testDisabled(EnvironmentPath, feature: String)
    case noSteps
    /// A part of a written list of steps that is not a number.
    case invalidStep(String)
    /// A step outside (0, 100], or not above the one before it.
    case stepOutOfOrder(index: Int, share: Double, previous: Double?)
    /// The first step is not above the share the variation already has.
    case stepsBelowCurrent(variation: String, current: Double, first: Double)
    case tooManySteps(maximum: Int)
    case invalidHold(String)
    case holdOutOfRange(seconds: Int)
    /// The test has a running or paused ramp already.
    case alreadyRamping(EnvironmentPath, feature: String, id: Int64)
    case rampNotFound(EnvironmentPath, feature: String)
    /// A written guard that is not one, and why.
    case invalidGuard(String, reason: String)
    /// A goal guard names a goal the environment doesn't have.
    case unknownGoal(EnvironmentPath, name: String, existing: [String])
    /// Two guards watch the same thing.
    case duplicateGuard(String)
    /// A one-step ramp has no hold for its guards to judge.
    case guardsNeedHolds
    /// A ramp action's text that is not one (`pause` or `rollback`).
    case invalidFailureAction(String)
    /// The action needs a ramp in another state (`pause` a running one, `resume` a paused one…).
    case wrongState(feature: String, state: RampState, action: String)

    /// The most steps a ramp takes.
    public static let maximumSteps = 50
    /// The longest hold: 90 days.
    public static let longestHold = 90 * 86_400

    public var description: String {
        switch self {
        case .middleVariation(let feature, let variation, let variations):
            "\(variation) is in the middle of \(feature)'s variations (\(variations.joined(separator: ", "))): growing it would move users between the others. Ramp \(variations.first!) or \(variations.last!), the only ones that grow by taking users from their neighbours alone."
        case .testDisabled(let path, let feature):
            "\(feature) is disabled in \(path): a ramp would grow a variation nobody gets. Enable it first (`flagpole feature enable \(feature)`)."
        case .noSteps:
            "Give the ramp its steps, the growing variation's share at each, e.g. --steps 1,5,20,50,100."
        case .invalidStep(let text):
            "“\(text.prefix(40))” is not a share: write the steps as percents with commas between, e.g. 1, 5, 20, 50, 100."
        case .stepOutOfOrder(let index, let share, let previous):
            if let previous {
                "Step \(index + 1) (\(Percent.format(share))) is not above step \(index) (\(Percent.format(previous))): steps grow, each above the last and at most 100, e.g. 1,5,20,50,100."
            } else {
                "Step \(index + 1) (\(Percent.format(share))) is not a share: each step is above 0 and at most 100, e.g. 1,5,20,50,100."
            }
        case .stepsBelowCurrent(let variation, let current, let first):
            "\(variation) already has \(Percent.format(current)), and the first step (\(Percent.format(first))) is not above it: start the steps above \(Percent.format(current))."
        case .tooManySteps(let maximum):
            "A ramp has at most \(maximum) steps."
        case .invalidHold(let text):
            "\"\(text.prefix(60))\" is not a hold: write a length of time (\(DurationText.examples)) or a time of day, daily or on weekdays, in a time zone (weekdays at 10:00 Europe/Berlin)."
        case .holdOutOfRange(let seconds):
            "A hold of \(DurationText.text(seconds: seconds)) is out of range: hold each step at least 1 second and at most 90 days."
        case .alreadyRamping(let path, let feature, let id):
            "\(feature) in \(path) has a ramp already (\(id)): one ramp per test. See it with `flagpole ramp show \(feature)`, and abort it first to start another."
        case .rampNotFound(let path, let feature):
            "\(feature) in \(path) has no ramp. Start one with `flagpole ramp create \(feature) --steps 1,5,20,50,100 --hold 24h`."
        case .invalidGuard(let text, let reason):
            "“\(text.prefix(60))” is not a guard: \(reason)."
        case .unknownGoal(let path, let name, let existing):
            "\(path) has no goal “\(name.prefix(100))”"
                + (existing.isEmpty
                    ? ". Define it first with `flagpole goal create \(name.prefix(100)) --kind conversion --better lower`."
                    : ": its goals are \(existing.joined(separator: ", ")).")
        case .duplicateGuard(let text):
            "Two guards watch the same thing (\(text.prefix(60))): give each once."
        case .guardsNeedHolds:
            "Guards judge the holds between steps, and a one-step ramp has none: give it more steps, e.g. --steps 1,5,20,50,100."
        case .invalidFailureAction(let text):
            "“\(text.prefix(40))” is not what a failed guard does: write pause or rollback."
        case .wrongState(let feature, let state, let action):
            "The ramp of \(feature) is \(state.rawValue), so it cannot be \(action): \(state.whatCanBeDone)"
        }
    }

    public var code: String {
        switch self {
        case .rampNotFound: "not_found"
        case .alreadyRamping, .wrongState: "conflict"
        default: "invalid"
        }
    }
}
