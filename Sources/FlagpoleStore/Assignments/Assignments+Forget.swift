import FlagpoleCore
import Foundation

/// What forgetting a user deleted.
public struct ForgetReport: Hashable, Sendable {
    public var tenant: TenantSlug
    /// Rows deleted, by kind: the user's groups (overrides included), their events, unlock
    /// states and their events, attributes.
    public var assignments = 0
    public var assignmentEvents = 0
    public var unlocks = 0
    public var attributes = 0
    /// Raw events and the user's part in the tests (the variations' sums name nobody, and keep it).
    public var events = 0
    /// `environment/segment` for every current segment whose list still names the user: a list
    /// is part of the revisions that keep it, so the team removes the id (`flagpole segment set`).
    public var segmentsListingUser: [String] = []

    public var rowsDeleted: Int { assignments + assignmentEvents + unlocks + attributes + events }
}

extension Assignments {
    /// Deletes everything the store recorded of `user` in every environment of `tenant` (their
    /// attributes, groups, overrides, unlocks and the history of all of them) in one transaction,
    /// and notes that a user was forgotten, by `actor`, without naming them: what a
    /// data-protection request needs. The counts of the tests' users drop by the user from now on.
    ///
    /// - throws: `TenancyError.tenantNotFound`.
    public func forget(_ user: UserID, in tenant: TenantSlug, actor: String) async throws -> ForgetReport {
        try await transaction(isReadOnly: false) { db in
            let tenantScope = try db.tenants.scope(of: tenant)
            let now = Date()
            var report = ForgetReport(tenant: tenant)
            for environment in try db.environments.all(of: tenantScope) {
                let scope = try db.environments.scope(
                    of: EnvironmentPath(tenant: tenant, environment: EnvironmentName(rawValue: environment.name)))
                let features = try db.features.storedFeatures(in: scope)
                let (assignments, events) = try db.assignments.forget(user, in: scope, features: features, now: now)
                report.assignments += assignments
                report.assignmentEvents += events
                report.unlocks += try db.unlocks.forget(user, in: scope)
                report.attributes += try db.userAttributes.forget(user, in: scope)
                report.events += try db.experiments.forget(user, in: scope)
                // The change sequence names no one forgotten: the environment reads as wholly
                // changed, and the steps that named this user go.
                try db.environments.forgetChanges(in: scope)
                db.noteEveryUserChanged(in: scope)
                let targeting = try TargetingDocument(stored: try db.environments.revision(nil, in: scope)?.targeting)
                for definition in targeting.segments.values.sorted(by: { $0.name < $1.name })
                where definition.users != nil {
                    if try Catalog.segment(definition, in: scope, db: db).users.contains(user) {
                        report.segmentsListingUser.append("\(environment.name)/\(definition.name)")
                    }
                }
            }
            try db.userAttributes.noteErasure(
                in: tenantScope, actor: actor, rowsDeleted: report.rowsDeleted, at: now)
            return report
        }
    }
}
