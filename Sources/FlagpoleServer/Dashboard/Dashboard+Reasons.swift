import FlagpoleStore

/// The reasons an environment asks for: every change applied from the dashboard in an
/// environment marked "changes need a reason" carries one, or nothing is written.
extension Dashboard {
    /// Whether the environment of `context` asks a reason of every change.
    func requiresReason(_ context: DashboardEnvironmentContext<some RequiredRole>) async throws -> Bool {
        let environments = try await store.environments(of: context.path.tenant)
        return environments.first { $0.path == context.path }?.marking.requiresReason ?? false
    }

    /// Refuses applying a change without a reason where the environment asks for one.
    func checkReason(_ reason: String?, in context: DashboardEnvironmentContext<some RequiredRole>) async throws {
        guard ReasonField.message(reason) == nil else { return }
        try Self.checkReason(reason, isRequired: try await requiresReason(context), in: context.path)
    }

    /// The same, when whether the environment asks for one is known already.
    static func checkReason(_ reason: String?, isRequired: Bool, in path: EnvironmentPath) throws {
        guard isRequired, ReasonField.message(reason) == nil else { return }
        throw APIError.invalid(
            "\(path) asks a reason for every change: nothing was written. Write what the change is for in the Reason field, such as “phase 2 of the roll-out”, then apply again."
        )
    }
}
