import FlagpoleStore

/// The reasons an environment asks for. The store refuses a change given none where the
/// environment asks one (`DocumentError.reasonRequired`), whichever way it came in; the dashboard
/// only marks the Reason field required and confirms a one-click switch first.
extension Dashboard {
    /// Whether the environment of `context` asks a reason of every change.
    func requiresReason(_ context: DashboardEnvironmentContext<some RequiredRole>) async throws -> Bool {
        let environments = try await store.access.environments(of: context.path.tenant)
        return environments.first { $0.path == context.path }?.marking.requiresReason ?? false
    }
}
