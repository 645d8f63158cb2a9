import Crypto
import FlagpoleCore
import Foundation
import NIOPosix
import _CryptoExtras

/// scrypt's cost: `2^log2N` rounds of `blockSize` × 128 bytes, so memory is
/// 128 × `blockSize` × 2^`log2N` bytes a hash.
public struct PasswordCost: Hashable, Sendable {
    public var log2N: Int
    public var blockSize: Int
    public var parallelism: Int

    /// OWASP's recommendation: N = 2^17, r = 8, p = 1, 128 MiB a hash.
    public static let owasp = PasswordCost(log2N: 17, blockSize: 8, parallelism: 1)

    public init(log2N: Int, blockSize: Int, parallelism: Int) {
        self.log2N = log2N
        self.blockSize = blockSize
        self.parallelism = parallelism
    }
}

/// Passwords as the store keeps them: `scrypt$LOG2N$R$P$SALT$HASH`, salt and hash in hex, so
/// a hash made at today's cost still verifies after the cost goes up.
enum PasswordHash {
    /// Shorter passwords are refused when set.
    static let minimumLength = 10
    /// Longer ones are refused before hashing: nobody's password is 1 KiB, and scrypt reads
    /// every byte of it.
    static let maximumBytes = 1024

    /// At most this many hashes run at once, each on a thread of its own, so fifty sign-ins
    /// at once need 2 × 128 MiB and leave the server's event loops and tasks free.
    static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 2)
        pool.start()
        return pool
    }()

    /// Refuses a password to be set before any hashing.
    ///
    /// - throws: `MemberError.passwordTooLong`, `.passwordTooShort`.
    static func check(_ password: String) throws {
        try checkSize(password)
        guard password.count >= minimumLength else { throw MemberError.passwordTooShort(minimum: minimumLength) }
    }

    /// - throws: `MemberError.passwordTooLong`.
    static func checkSize(_ password: String) throws {
        guard password.utf8.count <= maximumBytes else {
            throw MemberError.passwordTooLong(maximumBytes: maximumBytes)
        }
    }

    /// The stored form of `password`, with a new random salt.
    static func make(_ password: String, cost: PasswordCost) async throws -> String {
        let salt = (0..<16).map { _ in UInt8.random(in: 0...255) }
        let hash = try await derive(password, salt: salt, cost: cost)
        return "scrypt$\(cost.log2N)$\(cost.blockSize)$\(cost.parallelism)$\(salt.hexEncoded)$\(hash.hexEncoded)"
    }

    /// Whether `password` is the one `stored` was made from, compared in constant time. With
    /// no stored hash (an unknown address), a hash at `cost` is made all the same, so the
    /// answer takes as long as for a real account.
    static func verify(
        _ password: String, against stored: String?, orCost cost: PasswordCost = .owasp
    )
        async throws -> Bool
    {
        guard let stored, let parts = Parts(stored) else {
            _ = try await derive(password, salt: [UInt8](repeating: 0, count: 16), cost: cost)
            return false
        }
        let hash = try await derive(password, salt: parts.salt, cost: parts.cost)
        return ConstantTime.isEqual(hash, parts.hash)
    }

    private static func derive(_ password: String, salt: [UInt8], cost: PasswordCost) async throws -> [UInt8] {
        try await pool.runIfActive {
            try KDF.Scrypt.deriveKey(
                from: Array(password.utf8), salt: salt, outputByteCount: 32, rounds: 1 << cost.log2N,
                blockSize: cost.blockSize, parallelism: cost.parallelism
            ).withUnsafeBytes { Array($0) }
        }
    }

    private struct Parts {
        var cost: PasswordCost
        var salt: [UInt8]
        var hash: [UInt8]

        init?(_ stored: String) {
            let fields = stored.split(separator: "$")
            guard fields.count == 6, fields[0] == "scrypt", let log2N = Int(fields[1]), let blockSize = Int(fields[2]),
                let parallelism = Int(fields[3]), (1...24).contains(log2N), let salt = Hex.decode(String(fields[4])),
                let hash = Hex.decode(String(fields[5]))
            else { return nil }
            cost = PasswordCost(log2N: log2N, blockSize: blockSize, parallelism: parallelism)
            self.salt = salt
            self.hash = hash
        }
    }
}
