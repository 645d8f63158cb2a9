import Crypto
import Foundation

/// A secret a client presents: a marker naming its kind, then random bytes as lowercase hex.
/// The store keeps only its SHA-256 (`digest`), so a row found by it says nothing of the secret.
struct Secret<Kind: SecretKind>: Sendable {
    let value: String

    var digest: [UInt8] { Array(SHA256.hash(data: Array(value.utf8))) }

    /// A presented secret, if it has the shape of one of its kind.
    init?(_ value: String) {
        let digits = value.utf8.dropFirst(Kind.marker.utf8.count)
        guard value.hasPrefix(Kind.marker), digits.count == Kind.randomBytes * 2,
            digits.allSatisfy(\.isLowercaseHexDigit)
        else { return nil }
        self.value = value
    }

    static func generate() -> Self {
        Self(Kind.marker + randomHex(bytes: Kind.randomBytes))!
    }
}

/// What sets one kind of secret apart.
protocol SecretKind: Sendable {
    static var marker: String { get }
    static var randomBytes: Int { get }
}

/// An API key: `fp_` and 48 hex digits (192 random bits).
enum APIKeyKind: SecretKind {
    static let marker = "fp_"
    static let randomBytes = 24
}

/// A dashboard session's token: `fps_` and 64 hex digits (256 random bits).
enum SessionKind: SecretKind {
    static let marker = "fps_"
    static let randomBytes = 32
}

typealias APIKeySecret = Secret<APIKeyKind>
typealias SessionToken = Secret<SessionKind>

extension Secret where Kind == APIKeyKind {
    /// The marker and 8 digits: 32 bits, shown in listings.
    static var prefixLength: Int { 11 }

    var prefix: String { String(value.prefix(Self.prefixLength)) }
}

/// `bytes` bytes from the system's secure generator, as lowercase hex digits.
func randomHex(bytes: Int) -> String {
    // One read of the kernel's generator for all of them, where swift-crypto's and the standard
    // library's generators make a system call for every 8 bytes: an import makes a salt for every
    // new feature. The standard library's generator is the way round if the device can't be read.
    if let device = FileHandle(forReadingAtPath: "/dev/urandom"),
        let random = try? device.read(upToCount: bytes), random.count == bytes
    {
        try? device.close()
        return random.hexEncoded
    }
    var generator = SystemRandomNumberGenerator()
    return (0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) }.hexEncoded
}

extension UInt8 {
    var isLowercaseHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
    }
}

/// A member's one-time link token: `fpl_` and 64 hex digits (256 random bits).
enum MemberLinkKind: SecretKind {
    static let marker = "fpl_"
    static let randomBytes = 32
}

typealias MemberLinkToken = Secret<MemberLinkKind>

/// A trigger's token: `fpt_` and 64 hex digits (256 random bits), in the URL an alert calls.
enum TriggerKind: SecretKind {
    static let marker = "fpt_"
    static let randomBytes = 32
}

typealias TriggerToken = Secret<TriggerKind>

extension Secret where Kind == TriggerKind {
    /// The marker and 8 digits, shown in listings.
    var prefix: String { String(value.prefix(12)) }
}

/// A webhook's signing secret: `whsec_` and 64 hex digits (256 random bits). Unlike the other
/// secrets it is kept as it is, since the server signs with it; it is shown once.
enum WebhookSecretKind: SecretKind {
    static let marker = "whsec_"
    static let randomBytes = 32
}

typealias WebhookSecret = Secret<WebhookSecretKind>
