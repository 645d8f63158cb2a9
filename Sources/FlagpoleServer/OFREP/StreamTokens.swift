import Crypto
import FlagpoleCore
import FlagpoleStore
import Foundation
import Synchronization

/// The tokens that let a browser's `EventSource`, which can't send headers, open the change
/// stream of a private environment: the `requestUri` a bulk evaluation advertises carries one.
///
/// A token is `WINDOW.HMAC`: an HMAC-SHA256, under a secret the database keeps, of the
/// environment and a 12-hour window. It opens that environment's stream, nothing else, until
/// the window after its own ends (12 to 24 hours). It is the same for every request in a window,
/// so the bulk answer that carries it, and that answer's ETag, stay the same too; and it stays
/// valid across restarts.
final class StreamTokens: Sendable {
    static let window: TimeInterval = 12 * 3600
    private let store: FeatureStore
    private let key = Mutex<SymmetricKey?>(nil)

    init(store: FeatureStore) {
        self.store = store
    }

    /// The token of `path`'s stream for now.
    func token(for path: EnvironmentPath, now: Date = Date()) async throws -> String {
        let window = Int(now.timeIntervalSince1970 / Self.window)
        return "\(window).\(try await signature(of: path, window: window))"
    }

    /// Whether `token` opens `path`'s stream now.
    func isValid(_ token: String, for path: EnvironmentPath, now: Date = Date()) async throws -> Bool {
        let parts = token.split(separator: ".", maxSplits: 1)
        guard parts.count == 2, let window = Int(parts[0]) else { return false }
        let current = Int(now.timeIntervalSince1970 / Self.window)
        guard window == current || window == current - 1 else { return false }
        let expected = try await signature(of: path, window: window)
        return ConstantTime.isEqual(Array(expected.utf8), Array(parts[1].utf8))
    }

    private func signature(of path: EnvironmentPath, window: Int) async throws -> String {
        let key = try await secret()
        let message = Array("changes:\(path.tenant.rawValue)/\(path.environment.rawValue):\(window)".utf8)
        return Hex.encode(HMAC<SHA256>.authenticationCode(for: message, using: key))
    }

    private func secret() async throws -> SymmetricKey {
        if let key = key.withLock({ $0 }) { return key }
        let loaded = SymmetricKey(data: try await store.access.secret(named: "change-stream-tokens"))
        key.withLock { $0 = loaded }
        return loaded
    }
}
