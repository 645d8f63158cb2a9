/// The points of a feature's users: `murmur3_x86_32(utf8(salt + ":" + user), seed 0) / 2^32 * 100`,
/// in [0, 100) (docs/ARCHITECTURE.md, "Bucketing").
///
/// Bulk assignment computes millions of points with one salt, so the hash state after the
/// salt's whole blocks is computed once and each user only hashes what follows.
public struct UserPoints: Sendable {
    /// The feature's salt, fixed for its life.
    public let salt: String
    private let prefixState: Murmur3.State
    /// The bytes of `salt + ":"` past its last whole block.
    private let prefixTail: [UInt8]

    /// Prepares the points of `salt`'s feature: the hash of its whole blocks is computed here, once.
    public init(salt: String) {
        self.salt = salt
        let prefix = Array((salt + ":").utf8)
        var state = Murmur3.State(seed: 0)
        let tail = prefix.withUnsafeBytes { state.consumeBlocks($0) }
        prefixState = state
        prefixTail = Array(prefix[tail...])
    }

    /// The point of `user`.
    public func point(for user: String) -> Double {
        Self.point(hash: hash(for: user))
    }

    /// The point of the user whose id is these UTF-8 bytes.
    public func point(forUTF8 user: UnsafeRawBufferPointer) -> Double {
        Self.point(hash: hash(user))
    }

    /// The hash a user's point is scaled from: an integer, so it crosses text boundaries exactly.
    public func hash(for user: String) -> UInt32 {
        var user = user
        return user.withUTF8 { hash(UnsafeRawBufferPointer($0)) }
    }

    /// `hash / 2^32 * 100`, in that order, as docs/ARCHITECTURE.md ("Bucketing") writes it.
    public static func point(hash: UInt32) -> Double {
        Double(hash) / 4_294_967_296 * 100
    }

    private func hash(_ user: UnsafeRawBufferPointer) -> UInt32 {
        var state = prefixState
        if prefixTail.isEmpty {
            let tail = state.consumeBlocks(user)
            return state.finish(tail: UnsafeRawBufferPointer(rebasing: user[tail...]))
        }
        // Complete the salt's partial block with the user's first bytes, then go on aligned to the user.
        let fill = min(4 - prefixTail.count, user.count)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4) { joined in
            for (index, byte) in prefixTail.enumerated() { joined[index] = byte }
            for index in 0..<fill { joined[prefixTail.count + index] = user[index] }
            let joinedCount = prefixTail.count + fill
            let head = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(joined)[..<joinedCount])
            guard joinedCount == 4 else { return state.finish(tail: head) }
            _ = state.consumeBlocks(head)
            let rest = UnsafeRawBufferPointer(rebasing: user[fill...])
            let tail = state.consumeBlocks(rest)
            return state.finish(tail: UnsafeRawBufferPointer(rebasing: rest[tail...]))
        }
    }
}
