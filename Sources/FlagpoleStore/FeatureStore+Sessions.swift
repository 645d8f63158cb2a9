import Crypto
import Foundation

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
            guard let (keyID, identity) = try db.identity(of: presented), identity.role != .delivery else {
                return nil
            }
            let expiresAt = now.addingTimeInterval(Self.sessionLifetime)
            try db.keys.openSession(keyID: keyID, digest: token.digest, now: now, expiresAt: expiresAt)
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
            try db.keys.sessionKey(digest: token.digest, now: now).flatMap {
                KeyIdentity(prefix: $0.prefix, role: $0.role, tenant: $0.tenant)
            }
        }
    }

    /// Signs a session out: its token stops working at once. An unknown token changes nothing.
    public func closeSession(_ token: String) async throws {
        guard let token = SessionToken(token) else { return }
        try await write { db in
            try db.keys.closeSession(digest: token.digest)
        }
    }
}
