import AsyncHTTPClient
import Crypto
import FlagpoleCore
import FlagpoleStore
import Foundation
import NIOCore

/// After a successful publish, tells a CDN (through a relay of the user's) which URLs changed:
/// one `POST` per environment whose current documents changed, with a JSON body
///
///     {"tenant": "acme", "environment": "production", "revision": 12,
///      "urls": ["https://cdn.example.com/flags/acme/production/features.json", …],
///      "target": "s3://bucket/flags", "publishedAt": "2026-11-23T19:20:00Z"}
///
/// signed in `X-Flagpole-Signature-256: sha256=HEX`, the HMAC-SHA256 of the body's bytes under
/// the shared secret, so the receiver can check who sent it (and refuse an old `publishedAt`).
public struct PurgeHook: Sendable {
    public var url: String
    public var secret: [UInt8]
    /// Where the CDN serves the bucket: a changed object's URL is this, `/`, and its key.
    /// `nil`: the object's own URL at the endpoint.
    public var publicBaseURL: String?
    public var retries: RetryPolicy

    public static let signatureHeader = "X-Flagpole-Signature-256"

    public init(url: String, secret: [UInt8], publicBaseURL: String? = nil, retries: RetryPolicy = .standard) {
        self.url = url
        self.secret = secret
        self.publicBaseURL = publicBaseURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        self.retries = retries
    }

    /// The body of the hook for an environment's changed objects.
    static func body(
        for path: EnvironmentPath, revision: Int, urls: [String], target: S3Target, at time: Date
    ) -> [UInt8] {
        let body: JSONValue = [
            "tenant": .string(path.tenant.rawValue),
            "environment": .string(path.environment.rawValue),
            "revision": .number(Double(revision)),
            "urls": .array(urls.map(JSONValue.string)),
            "target": .string(target.description),
            "publishedAt": .string(time.formatted(.iso8601)),
        ]
        return JSONWriter(style: .compact).bytes(of: body)
    }

    /// `sha256=HEX` of `body` under the secret.
    func signature(of body: [UInt8]) -> String {
        "sha256=" + Hex.encode(HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: secret)))
    }

    /// Sends `body` until the receiver answers 2xx, or refuses it for good (a 4xx other than 408
    /// and 429), or the attempts run out: `nil` when it was taken, else why not.
    func send(_ body: [UInt8], with transport: any HTTPTransport) async -> String? {
        var attempt = 0
        while true {
            attempt += 1
            var request = HTTPClientRequest(url: url)
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: Self.signatureHeader, value: signature(of: body))
            request.body = .bytes(ByteBuffer(bytes: body))
            let failure: String
            var isTransient = true
            do {
                let response = try await transport.send(request, timeout: .seconds(30))
                _ = try? await response.body.collect(upTo: 1024 * 1024)
                let status = Int(response.status.code)
                if (200..<300).contains(status) { return nil }
                failure = "\(url) answered \(status) \(response.status.reasonPhrase)"
                isTransient = status >= 500 || status == 408 || status == 429
            } catch {
                failure = "\(url) could not be reached: \(error)"
            }
            guard isTransient, attempt < retries.attempts, !Task.isCancelled else {
                return attempt > 1 ? "\(failure) (after \(attempt) attempts)" : failure
            }
            try? await Task.sleep(for: retries.delay(after: attempt))
        }
    }
}
