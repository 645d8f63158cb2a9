/// MurmurHash3, x86 32-bit variant (Austin Appleby's reference `MurmurHash3_x86_32`).
///
/// Points must be identical on every machine and in every language a team might check them
/// from, so this follows the reference byte for byte: little-endian blocks, the same tail
/// and finaliser.
public enum Murmur3 {
    /// The hash of `bytes` with `seed`.
    public static func hash32(_ bytes: some Sequence<UInt8>, seed: UInt32 = 0) -> UInt32 {
        let array = Array(bytes)
        return array.withUnsafeBufferPointer { buffer in
            var state = State(seed: seed)
            let tail = state.consumeBlocks(UnsafeRawBufferPointer(buffer))
            return state.finish(tail: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[tail...]))
        }
    }

    /// The running state after whole 4-byte blocks.
    struct State {
        var hash: UInt32
        var length: Int = 0

        init(seed: UInt32) {
            hash = seed
        }

        /// Mixes every whole block of `bytes`; returns the offset of the tail left over.
        mutating func consumeBlocks(_ bytes: UnsafeRawBufferPointer) -> Int {
            let end = bytes.count & ~3
            var offset = 0
            while offset < end {
                let block = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
                hash ^= Self.scramble(block)
                hash = (hash << 13 | hash >> 19) &* 5 &+ 0xe654_6b64
                offset += 4
            }
            length += end
            return end
        }

        /// Mixes the last 0–3 bytes and the total length into the final hash.
        func finish(tail: UnsafeRawBufferPointer) -> UInt32 {
            var hash = self.hash
            var block: UInt32 = 0
            for (index, byte) in tail.enumerated() {
                block |= UInt32(byte) << (8 * UInt32(index))
            }
            if !tail.isEmpty { hash ^= Self.scramble(block) }
            hash ^= UInt32(truncatingIfNeeded: length + tail.count)
            hash ^= hash >> 16
            hash &*= 0x85eb_ca6b
            hash ^= hash >> 13
            hash &*= 0xc2b2_ae35
            hash ^= hash >> 16
            return hash
        }

        @inline(__always)
        private static func scramble(_ block: UInt32) -> UInt32 {
            var k = block &* 0xcc9e_2d51
            k = k << 15 | k >> 17
            return k &* 0x1b87_3593
        }
    }
}
