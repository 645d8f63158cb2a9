import FlagpoleCore
import FlagpoleStore
import HTTPTypes
import Hummingbird

/// Members: `flagpole member`. A tenant's admin manages that tenant's members and roles; only
/// a server operator makes a reset link, since a member is one person across tenants.
extension AdminAPI {
    func registerMembers(on api: RouterGroup<FlagpoleRequestContext>) {
        let serverAdmin = api.group(context: ServerAdminContext.self)
        let tenantAdmin = api.group(context: TenantContext<Needs.Admin>.self)

        tenantAdmin.get("tenants/:tenant/members", use: listMembers)
        tenantAdmin.post("tenants/:tenant/members", use: addMember)
        tenantAdmin.patch("tenants/:tenant/members/:email", use: updateMember)
        tenantAdmin.delete("tenants/:tenant/members/:email", use: removeMember)
        tenantAdmin.post("tenants/:tenant/members/:email/invitation", use: inviteMember)
        serverAdmin.post("members/:email/reset", use: resetMember)
    }

    // MARK: Handlers

    @Sendable func listMembers(_: Request, context: TenantContext<Needs.Admin>) async throws -> Response {
        .json(.array(try await store.access.members(of: context.tenant).map(\.jsonValue)))
    }

    /// `{"email", "name", "role"}`: someone new gets an invitation link, shown in this answer
    /// only; someone who already has a password is only added (`invitation` is null).
    @Sendable func addMember(_ request: Request, context: TenantContext<Needs.Admin>) async throws -> Response {
        let body = try await body(request, allowed: ["email", "name", "role"])
        let link = try await store.access.addMember(
            try body.requiredString("email"), name: try body.requiredString("name"), role: try Self.role(body),
            to: context.tenant, by: context.key.actor)
        let email = try body.requiredString("email").trimmingCharacters(in: .whitespaces).lowercased()
        guard let member = try await store.access.members(of: context.tenant).first(where: { $0.email == email }) else {
            throw MemberError.memberNotFound(email: email, tenant: context.tenant)
        }
        return .json(
            ["member": member.jsonValue, "invitation": link?.jsonValue(server: request.serverURL) ?? .null],
            status: .created)
    }

    /// `{"role"}`: it takes effect at once, in the member's open sessions and keys too.
    @Sendable func updateMember(_ request: Request, context: TenantContext<Needs.Admin>) async throws -> Response {
        let body = try await body(request, allowed: ["role"])
        let member = try await store.access.setRole(
            try Self.role(body), of: try context.decodedParameter("email"), in: context.tenant)
        return .json(member.jsonValue)
    }

    /// Their sessions end and their keys in the tenant are revoked, at once.
    @Sendable func removeMember(_: Request, context: TenantContext<Needs.Admin>) async throws -> Response {
        try await store.access.removeMember(try context.decodedParameter("email"), from: context.tenant)
        return Response(status: .noContent)
    }

    /// A new invitation for a member who has not set a password; the earlier one stops working.
    @Sendable func inviteMember(_ request: Request, context: TenantContext<Needs.Admin>) async throws -> Response {
        let link = try await store.access.invitation(
            for: try context.decodedParameter("email"), in: context.tenant, by: context.key.actor)
        return .json(link.jsonValue(server: request.serverURL), status: .created)
    }

    /// A reset link, for a server operator to hand over.
    @Sendable func resetMember(_ request: Request, context: ServerAdminContext) async throws -> Response {
        let link = try await store.access.resetLink(for: try context.decodedParameter("email"), by: context.key.actor)
        return .json(link.jsonValue(server: request.serverURL), status: .created)
    }

    private static func role(_ body: JSONBody) throws -> KeyRole {
        try KeyRole(member: try body.requiredString("role"))
    }
}
