import AsyncHTTPClient
import Crypto
import FlagpoleCore
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// How often and how patiently a request is sent again after a transient failure.
public struct RetryPolicy: Sendable {
    /// Sends in all, the first included.
    public var attempts: Int
    /// The wait before the second send; it doubles for each further one, up to `longest`.
    public var firstDelay: Duration
    public var longest: Duration
    /// How long one send may take, answer included.
    public var timeout: Duration

    public static let standard = RetryPolicy(
        attempts: 5, firstDelay: .milliseconds(200), longest: .seconds(5), timeout: .seconds(30))

    public init(attempts: Int, firstDelay: Duration, longest: Duration, timeout: Duration) {
        self.attempts = attempts
        self.firstDelay = firstDelay
        self.longest = longest
        self.timeout = timeout
    }

    /// The wait before send `attempt + 1`: exponential, with half of it random so that
    /// concurrent retries don't all come back at once.
    func delay(after attempt: Int) -> Duration {
        let full = min(longest, firstDelay * (1 << min(attempt - 1, 20)))
        return full / 2 + full / 2 * Double.random(in: 0...1)
    }
}

/// The few S3 operations publishing needs, signed with SigV4 and sent again on transient
/// failures. Counts what it sends, by method, for reports and benchmarks.
final class S3Client: Sendable {
    struct Response {
        var status: Int
        var headers: HTTPHeaders
        var body: [UInt8]
    }

    let target: S3Target
    let endpoint: S3Endpoint
    private let signer: SigV4Signer
    private let transport: any HTTPTransport
    private let retries: RetryPolicy
    /// The time requests are signed at: the clock, except in tests that compare signatures.
    private let now: @Sendable () -> Date
    /// Where the credentials came from, for the hint of a refused signature.
    private let credentialSource: String
    private let sent = Mutex<[String: Int]>([:])

    init(
        target: S3Target, configuration: AWSConfiguration, addressing: S3Addressing, transport: any HTTPTransport,
        retries: RetryPolicy, now: @escaping @Sendable () -> Date = { Date() }
    )
        throws(PublishError)
    {
        self.target = target
        endpoint = try S3Endpoint(
            endpoint: configuration.endpoint, region: configuration.region, bucket: target.bucket,
            addressing: addressing)
        signer = SigV4Signer(credentials: configuration.credentials, region: configuration.region)
        credentialSource = configuration.credentials.source
        self.transport = transport
        self.retries = retries
        self.now = now
    }

    /// The requests sent so far, by method; every retry counts.
    var requestCounts: [String: Int] { sent.withLock { $0 } }

    /// Writes an object. With `ifAbsent`, only when no object has the key: `false` when one has.
    func put(
        _ key: String, bytes: [UInt8], headers: [(name: String, value: String)], ifAbsent: Bool = false
    )
        async throws(PublishError) -> Bool
    {
        var headers = headers
        if ifAbsent { headers.append(("If-None-Match", "*")) }
        let response = try await send(.PUT, key: key, headers: headers, body: bytes, accepting: ifAbsent ? [412] : [])
        return response.status != 412
    }

    /// An object's bytes, `nil` when no object has the key.
    func get(_ key: String) async throws(PublishError) -> [UInt8]? {
        let response = try await send(.GET, key: key, accepting: [404])
        return response.status == 404 ? nil : response.body
    }

    /// An object's headers, `nil` when no object has the key.
    func head(_ key: String) async throws(PublishError) -> HTTPHeaders? {
        let response = try await send(.HEAD, key: key, accepting: [404])
        return response.status == 404 ? nil : response.headers
    }

    /// `s3://bucket/key`, as messages name an object.
    func name(of key: String) -> String { "s3://\(target.bucket)/\(key)" }

    /// Sends until an answer that is a success or in `accepting`, or a failure that is not
    /// transient, or the attempts run out. A 404 that is `NoSuchBucket` is never accepted.
    private func send(
        _ method: HTTPMethod, key: String, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
        accepting: Set<Int>
    ) async throws(PublishError) -> Response {
        let path = endpoint.path(bucket: target.bucket, key: key)
        let payloadSHA256 = Hex.encode(SHA256.hash(data: body))
        var attempt = 0
        while true {
            attempt += 1
            var failure: S3Failure
            do {
                let response = try await sendOnce(
                    method, path: path, headers: headers, body: body, sha256: payloadSHA256)
                let code = Self.errorCode(in: response.body)
                if (200..<300).contains(response.status)
                    || (accepting.contains(response.status) && code != "NoSuchBucket")
                {
                    return response
                }
                failure = S3Failure(
                    method: method.rawValue, object: name(of: key), status: response.status,
                    code: code ?? HTTPResponseStatus(statusCode: response.status).reasonPhrase,
                    message: Self.errorMessage(in: response.body) ?? "no message", attempts: attempt, hint: "")
            } catch {
                failure = S3Failure(
                    method: method.rawValue, object: name(of: key), status: nil, code: "no answer",
                    message: Self.describe(error), attempts: attempt, hint: "")
            }
            guard failure.isRetried, attempt < retries.attempts, !Task.isCancelled else {
                failure.hint = hint(for: failure)
                throw .storage(failure)
            }
            try? await Task.sleep(for: retries.delay(after: attempt))
        }
    }

    private func sendOnce(
        _ method: HTTPMethod, path: String, headers: [(name: String, value: String)], body: [UInt8], sha256: String
    ) async throws -> Response {
        let request = request(method, path: path, headers: headers, body: body, sha256: sha256, at: now())
        sent.withLock { $0[method.rawValue, default: 0] += 1 }
        let timeout = TimeAmount.nanoseconds(
            Int64(retries.timeout.components.seconds) * 1_000_000_000 + retries.timeout.components.attoseconds
                / 1_000_000_000)
        let response = try await transport.send(request, timeout: timeout)
        let bytes = try await response.body.collect(upTo: 64 * 1024 * 1024)
        return Response(status: Int(response.status.code), headers: response.headers, body: Array(buffer: bytes))
    }

    /// The request as it goes on the wire, signed at `date`: `Host`, the caller's headers, then
    /// the signature's. `query` (already encoded, without `?`) is empty for every operation
    /// publishing sends; it is a parameter so that tests can check the wire request of every
    /// case botocore signed (`Tests/Fixtures/sigv4`), queries included.
    func request(
        _ method: HTTPMethod, path: String, query: String = "", headers: [(name: String, value: String)],
        body: [UInt8], sha256: String, at date: Date
    ) -> HTTPClientRequest {
        let host = endpoint.hostHeader(bucket: target.bucket)
        let signature = signer.sign(
            SigV4Signer.Request(
                method: method.rawValue, host: host, path: path, query: query, headers: headers,
                payloadSHA256: sha256),
            at: date)
        var request = HTTPClientRequest(
            url: endpoint.url(bucket: target.bucket, path: path) + (query.isEmpty ? "" : "?\(query)"))
        request.method = method
        request.headers.add(name: "Host", value: host)
        for (name, value) in headers + signature.headers { request.headers.add(name: name, value: value) }
        if method == .PUT { request.body = .bytes(ByteBuffer(bytes: body)) }
        return request
    }

    /// What to do about a failure, in terms of the setting that causes it.
    private func hint(for failure: S3Failure) -> String {
        switch failure.code {
        case "NoSuchBucket":
            return
                "Create the bucket \(target.bucket) at \(endpoint.origin) (aws s3 mb s3://\(target.bucket)), or check --to and --endpoint."
        case "AccessDenied", "SignatureDoesNotMatch", "InvalidAccessKeyId", "InvalidToken", "ExpiredToken":
            return
                "Check the credentials (read from \(credentialSource)), and that they may s3:GetObject and s3:PutObject in \(target)."
        case "PermanentRedirect", "AuthorizationHeaderMalformed", "IllegalLocationConstraintException":
            return "The bucket is in another region: set --region or AWS_REGION to it."
        case "AccessControlListNotSupported":
            return "The bucket does not take ACLs (its objects follow its own policy): drop --public-read."
        default:
            return failure.status == nil
                ? "Check that \(endpoint.origin) is reachable; the next publish completes this one."
                : "The next publish completes this one."
        }
    }

    /// `<Code>` of an S3 error document.
    static func errorCode(in body: [UInt8]) -> String? { element("Code", in: body) }

    /// `<Message>` of an S3 error document.
    static func errorMessage(in body: [UInt8]) -> String? { element("Message", in: body) }

    private static func element(_ name: String, in body: [UInt8]) -> String? {
        guard !body.isEmpty, body.count < 64 * 1024 else { return nil }
        let text = String(decoding: body, as: UTF8.self)
        guard let start = text.range(of: "<\(name)>"),
            let end = text.range(of: "</\(name)>", range: start.upperBound..<text.endIndex)
        else { return nil }
        return String(text[start.upperBound..<end.lowerBound])
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    private static func describe(_ error: any Error) -> String {
        if let error = error as? HTTPClientError {
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout: return "no answer in time"
            case .remoteConnectionClosed: return "the server closed the connection"
            default: return "\(error)"
            }
        }
        return "\(error)"
    }
}
