import CompressNIO
import Crypto
import FlagpoleCore
import NIOCore

/// A features.json as it is delivered: its bytes, their SHA-256 and their gzip encoding.
public struct DeliveryArtifact: Sendable {
    public let bytes: [UInt8]
    /// The hex SHA-256 of `bytes`: the strong ETag and the CDN manifest's checksum.
    public let sha256: String

    /// The strong ETag of the identity encoding: the first half of the digest, quoted.
    public var etag: String { "\"\(sha256.prefix(32))\"" }

    public init(bytes: [UInt8]) {
        self.bytes = bytes
        let digest = SHA256.hash(data: bytes)
        // From the digest's own storage: users' own documents are hashed on every fetch.
        self.sha256 = digest.withUnsafeBytes { Hex.encode($0) }
    }

    /// The gzip encoding of `bytes`: deterministic (no timestamp in the header), so an
    /// unchanged document keeps the same compressed bytes too.
    public func gzipped() throws -> [UInt8] {
        var buffer = ByteBuffer(bytes: bytes)
        let compressed = try buffer.compress(with: .gzip(configuration: .init(compressionLevel: 9)))
        return Array(compressed.readableBytesView)
    }
}
