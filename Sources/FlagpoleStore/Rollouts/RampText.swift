import FlagpoleCore

/// A ramp's steps as people write them (its hold is `RampHold(parsing:)`). The command line, the API and the dashboard
/// read them here, so each says the same about a typo.
public enum RampText {
    /// The shares of `1, 5, 20, 50, 100` (commas between, spaces allowed).
    ///
    /// - throws: `RampError.invalidStep` naming the first part that is not a number.
    public static func steps(_ text: String) throws(RampError) -> [Double] {
        var steps: [Double] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let trimmed = part.trimmingCharacters(in: .whitespaces)
            guard let share = Double(trimmed) else { throw RampError.invalidStep(trimmed) }
            steps.append(share)
        }
        return steps
    }

    /// The guard written as `crashes:+0.2pt`, `sample-ratio`, `traffic` or `min-users:500`.
    ///
    /// - throws: `RampError.invalidGuard` saying what is expected.
    public static func guardrail(_ text: String) throws(RampError) -> RampGuard {
        do {
            return try RampGuard(parsing: text)
        } catch {
            throw RampError.invalidGuard(error.text, reason: error.reason)
        }
    }

    /// What a failed guard does: `pause` or `rollback`.
    ///
    /// - throws: `RampError.invalidFailureAction`.
    public static func failureAction(_ text: String) throws(RampError) -> RampFailureAction {
        guard let action = RampFailureAction(rawValue: text.trimmingCharacters(in: .whitespaces).lowercased()) else {
            throw RampError.invalidFailureAction(text)
        }
        return action
    }
}
