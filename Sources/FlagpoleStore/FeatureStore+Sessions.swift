import Crypto
import Foundation
import GRDB

/// A dashboard sign-in just opened: the only time its token exists outside the browser.
public struct OpenedSession: Hashable, Sendable {
    /// Goes in the session cookie; the store keeps only its SHA-256.
    public var token: String
    public var identity: KeyIdentity
    public var expiresAt: Date
}

extension FeatureStore {
    /// How long a dashboard sign-in lasts. It does not slide: a session found in a browser
    /// weeks later is worthless.
    public static let sessionLifetime: TimeInterval = 12 * 60 * 60

    /// Signs in to the dashboard with an API key: `nil` for an unknown, revoked or delivery key
    /// (delivery keys only fetch documents). Expired sessions are swept on the way.
    public func openSession(withKey secret: String, now: Date = Date()) async throws -> OpenedSession? {
        guard let presented = APIKeySecret(secret) else { return nil }
        let token = SessionToken.generate()
        return try await write { db -> OpenedSession? in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT k.id, k.role, k.sha256, t.slug FROM api_keys k LEFT JOIN tenants t ON t.id = k.tenant_id
                        WHERE k.prefix = ? AND k.revoked_at IS NULL
                        """, arguments: [presented.prefix]),
                ConstantTime.isEqual(row[2] as Data, presented.digest),
                let identity = KeyIdentity(prefix: presented.prefix, role: row[1], tenant: row[3]),
                identity.role != .delivery
            else { return nil }
            let expiresAt = now.addingTimeInterval(Self.sessionLifetime)
            try db.execute(sql: "DELETE FROM sessions WHERE expires_at <= ?", arguments: [now.unixMilliseconds])
            try db.execute(
                sql: "INSERT INTO sessions (key_id, sha256, created_at, expires_at) VALUES (?, ?, ?, ?)",
                arguments: [row[0] as Int64, Data(token.digest), now.unixMilliseconds, expiresAt.unixMilliseconds])
            return OpenedSession(token: token.value, identity: identity, expiresAt: expiresAt)
        }
    }

    /// The key a session acts with, or `nil` when the token is unknown, expired, signed out,
    /// or its key was revoked since.
    ///
    /// The row is found by the token's SHA-256, so lookup time says nothing about a guessed token.
    public func sessionIdentity(_ token: String, now: Date = Date()) async throws -> KeyIdentity? {
        guard let token = SessionToken(token) else { return nil }
        return try await read { db in
            try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT k.prefix, k.role, t.slug FROM sessions s
                        JOIN api_keys k ON k.id = s.key_id LEFT JOIN tenants t ON t.id = k.tenant_id
                        WHERE s.sha256 = ? AND s.expires_at > ? AND k.revoked_at IS NULL
                        """), arguments: [Data(token.digest), now.unixMilliseconds]
            )
            .flatMap { KeyIdentity(prefix: $0[0], role: $0[1], tenant: $0[2]) }
        }
    }

    /// Signs a session out: its token stops working at once. An unknown token changes nothing.
    public func closeSession(_ token: String) async throws {
        guard let token = SessionToken(token) else { return }
        try await write { db in
            try db.execute(sql: "DELETE FROM sessions WHERE sha256 = ?", arguments: [Data(token.digest)])
        }
    }
}

/// The secret of a dashboard session: `fps_` and 64 hex digits (256 random bits).
struct SessionToken: Sendable {
    static let marker = "fps_"
    static let randomBytes = 32

    let value: String

    var digest: [UInt8] { Array(SHA256.hash(data: Array(value.utf8))) }

    /// A presented token, if it has the shape of one.
    init?(_ value: String) {
        let digits = value.utf8.dropFirst(Self.marker.utf8.count)
        guard value.hasPrefix(Self.marker), digits.count == Self.randomBytes * 2,
            digits.allSatisfy(\.isLowercaseHexDigit)
        else { return nil }
        self.value = value
    }

    static func generate() -> SessionToken {
        SessionToken(marker + randomHex(bytes: randomBytes))!
    }
}

extension UInt8 {
    var isLowercaseHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
    }
}
