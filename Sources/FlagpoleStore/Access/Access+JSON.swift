import FlagpoleCore
import Foundation

// The JSON shapes of tenants, environments, keys and members: one definition for the command line's `--json`
// and the HTTP API, so both always say the same thing the same way.

extension Tenant {
    public var jsonValue: JSONValue {
        [
            "slug": .string(slug.rawValue),
            "name": .string(name),
            "environments": .array(environments.map { .string($0.rawValue) }),
            "createdAt": .string(createdAt.iso8601),
        ]
    }
}

extension Environment {
    public var jsonValue: JSONValue {
        [
            "name": .string(path.environment.rawValue),
            "revision": revision.map { .number(Double($0)) } ?? .null,
            "features": .number(Double(featureCount)),
            "createdAt": .string(createdAt.iso8601),
            "private": .bool(delivery.isPrivate),
            "cacheControl": delivery.cacheControl.map(JSONValue.string) ?? .null,
            "colour": marking.colour.map { .string($0.rawValue) } ?? .null,
            "requiresReason": .bool(marking.requiresReason),
        ]
    }
}

extension APIKeyInfo {
    public var jsonValue: JSONValue { .object(jsonObject) }

    /// Never the secret: only the prefix that recognises the key; `environment` is the one a
    /// delivery key is scoped to, or null.
    public var jsonObject: JSONObject {
        let tenant: JSONValue =
            switch owner {
            case .server, .member: .null
            case .tenant(let slug): .string(slug.rawValue)
            }
        return [
            "prefix": .string(prefix),
            "tenant": tenant,
            "role": .string(role.rawValue),
            "name": .string(name),
            "createdAt": .string(createdAt.iso8601),
            "revokedAt": revokedAt.map { .string($0.iso8601) } ?? .null,
            "environment": environment.map { .string($0.rawValue) } ?? .null,
            "member": member.map(JSONValue.string) ?? .null,
            "lastUsedAt": lastUsedAt.map { .string($0.iso8601) } ?? .null,
        ]
    }
}

extension Member {
    /// Never a password or a token.
    public var jsonValue: JSONValue {
        [
            "email": .string(email),
            "name": .string(name),
            "role": .string(role.rawValue),
            "joinedAt": .string(joinedAt.iso8601),
            "hasPassword": .bool(hasPassword),
            "invitedUntil": invitedUntil.map { .string($0.iso8601) } ?? .null,
        ]
    }
}

extension MemberLink {
    /// The link's token, shown this once, and where it leads on `server` (`http://host:port`).
    public func jsonValue(server: String) -> JSONValue {
        [
            "email": .string(email),
            "purpose": .string(purpose.rawValue),
            "url": .string(url(server: server)),
            "expiresAt": .string(expiresAt.iso8601),
        ]
    }

    /// The page that sets the password: `SERVER/welcome?token=TOKEN`. In the query, not the
    /// path, as access logs write paths only.
    public func url(server: String) -> String { "\(server)/welcome?token=\(token)" }
}
