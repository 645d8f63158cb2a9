import AsyncHTTPClient
import Crypto
import FlagpoleCore
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

@testable import FlagpolePublish

/// A request as a transport received it, its body read.
struct ReceivedRequest: Sendable, CustomStringConvertible {
    var method: String
    var url: String
    var headers: HTTPHeaders
    /// `nil` when the request had no body at all (not even an empty one).
    var body: [UInt8]?
    var timeout: TimeAmount
    /// The object's key in the bucket (decoded), for a request to the bucket.
    var key: String?

    var description: String { "\(method) \(key ?? url)" }

    /// Every value of `name`, joined as HTTP joins repeated headers.
    func header(_ name: String) -> String? {
        let values = headers[name]
        return values.isEmpty ? nil : values.joined(separator: ",")
    }

    static func reading(_ request: HTTPClientRequest, timeout: TimeAmount) async throws -> ReceivedRequest {
        var body: [UInt8]?
        if let stream = request.body {
            var bytes: [UInt8] = []
            for try await chunk in stream { bytes += Array(buffer: chunk) }
            body = bytes
        }
        return ReceivedRequest(
            method: request.method.rawValue, url: request.url, headers: request.headers, body: body, timeout: timeout)
    }
}

/// An answer of a scripted transport.
enum ScriptedAnswer: Sendable {
    /// A status, with S3's error document when `code` is given.
    case status(Int, code: String? = nil, headers: [(String, String)] = [], body: [UInt8] = [])
    /// The connection drops before any answer.
    case noAnswer

    static let ok = ScriptedAnswer.status(200)

    func response() throws -> HTTPClientResponse {
        switch self {
        case .status(let status, let code, let headers, let body):
            let bytes =
                code.map {
                    Array("<?xml version=\"1.0\"?><Error><Code>\($0)</Code><Message>scripted</Message></Error>".utf8)
                } ?? body
            return HTTPClientResponse(
                status: HTTPResponseStatus(statusCode: status), headers: HTTPHeaders(headers),
                body: .bytes(ByteBuffer(bytes: bytes)))
        case .noAnswer:
            throw HTTPClientError.remoteConnectionClosed
        }
    }
}

/// Answers requests in the order of `answers`, the last one again once they run out, and
/// records every request: for the decisions of `S3Client` one answer at a time.
final class ScriptedTransport: HTTPTransport {
    private let state: Mutex<(answers: [ScriptedAnswer], received: [ReceivedRequest])>

    init(_ answers: [ScriptedAnswer]) {
        state = Mutex((answers, []))
    }

    var received: [ReceivedRequest] { state.withLock { $0.received } }

    func send(_ request: HTTPClientRequest, timeout: TimeAmount) async throws -> HTTPClientResponse {
        let received = try await ReceivedRequest.reading(request, timeout: timeout)
        let answer = state.withLock { state in
            state.received.append(received)
            return state.answers.count > 1 ? state.answers.removeFirst() : state.answers[0]
        }
        return try answer.response()
    }
}

/// One S3 bucket, path-style at `http://s3.test:9000`, and a purge hook receiver at
/// `http://relay.test/purge`, in the process: it keeps objects, honours `If-None-Match: *`,
/// answers 404 to what it lacks, and checks what real S3 checks of a `PUT` (the body's SHA-256
/// against `x-amz-content-sha256` and `x-amz-checksum-sha256`).
///
/// At each request it also checks the invariant publishing promises: the manifest in the bucket
/// never names an object that is missing or holds other bytes. `violations` says when it did not.
final class FakeS3: HTTPTransport {
    /// What happens to a request instead of S3's answer.
    enum Fault: Sendable {
        /// This status and error code, nothing stored.
        case answer(Int, code: String)
        /// The connection drops before S3 does anything.
        case noAnswer
        /// S3 does it, then the connection drops before its answer arrives.
        case lostAnswer
    }

    struct Object: Sendable {
        var bytes: [UInt8]
        var headers: HTTPHeaders
        var sha256: String? { headers.first(name: "x-amz-meta-sha256") }
    }

    static let endpoint = "http://s3.test:9000"
    static let hookURL = "http://relay.test/purge"

    let bucket: String
    /// The manifest's key, whose every version is checked against the objects.
    let manifestKey: String

    private struct State {
        var objects: [String: Object] = [:]
        var received: [ReceivedRequest] = []
        var fault: @Sendable (ReceivedRequest, Int) -> Fault? = { _, _ in nil }
        var hookAnswers: [Int] = []
        var violations: [String] = []
    }
    private let state = Mutex(State())

    init(bucket: String, manifestKey: String) {
        self.bucket = bucket
        self.manifestKey = manifestKey
    }

    /// Every request, the hook's included, in the order they arrived.
    var received: [ReceivedRequest] { state.withLock { $0.received } }
    /// The requests to the bucket.
    var requests: [ReceivedRequest] { received.filter { $0.key != nil } }
    var hookCalls: [ReceivedRequest] { received.filter { $0.key == nil } }
    var violations: [String] { state.withLock { $0.violations } }

    func object(_ key: String) -> Object? { state.withLock { $0.objects[key] } }
    var keys: Set<String> { state.withLock { Set($0.objects.keys) } }

    /// The manifest in the bucket, read as the publisher reads it.
    func manifest() throws -> Manifest? {
        try object(manifestKey).map { object throws(PublishError) in try Manifest(parsing: object.bytes) }
    }

    /// Puts an object as another writer would, with its SHA-256 in its metadata.
    func store(_ key: String, _ bytes: [UInt8]) {
        let headers = HTTPHeaders([("x-amz-meta-sha256", Hex.encode(SHA256.hash(data: bytes)))])
        state.withLock { $0.objects[key] = Object(bytes: bytes, headers: headers) }
    }

    /// From now on, `fault` decides what happens to each request to the bucket (`nil`: S3's
    /// answer), given the request and how many with its method and key came before it.
    func failing(_ fault: @escaping @Sendable (ReceivedRequest, Int) -> Fault?) {
        state.withLock { $0.fault = fault }
    }

    /// The hook answers these statuses to its next calls, then 200.
    func answerHook(_ statuses: Int...) {
        state.withLock { $0.hookAnswers = statuses }
    }

    func send(_ request: HTTPClientRequest, timeout: TimeAmount) async throws -> HTTPClientResponse {
        var received = try await ReceivedRequest.reading(request, timeout: timeout)
        if request.url.hasPrefix(Self.hookURL) {
            let status = state.withLock { state in
                state.received.append(received)
                return state.hookAnswers.isEmpty ? 200 : state.hookAnswers.removeFirst()
            }
            return HTTPClientResponse(status: HTTPResponseStatus(statusCode: status))
        }
        let prefix = "\(Self.endpoint)/\(bucket)/"
        guard request.url.hasPrefix(prefix), let key = request.url.dropFirst(prefix.count).removingPercentEncoding
        else { throw HTTPClientError.connectTimeout }
        received.key = key
        let (fault, answer) = state.withLock { state in
            let earlier = state.received.count { $0.method == received.method && $0.key == key }
            state.received.append(received)
            let fault = state.fault(received, earlier)
            if case .answer(let status, let code)? = fault { return (fault, error(status, code)) }
            if case .noAnswer? = fault { return (fault, error(500, "unused")) }
            return (fault, Self.handle(received, key: key, in: &state, manifestKey: manifestKey))
        }
        if case .noAnswer? = fault { throw HTTPClientError.remoteConnectionClosed }
        if case .lostAnswer? = fault { throw HTTPClientError.readTimeout }
        return answer
    }

    private static func handle(
        _ request: ReceivedRequest, key: String, in state: inout State, manifestKey: String
    ) -> HTTPClientResponse {
        switch request.method {
        case "GET", "HEAD":
            guard let object = state.objects[key] else {
                return request.method == "GET" ? error(404, "NoSuchKey") : HTTPClientResponse(status: .notFound)
            }
            return HTTPClientResponse(
                status: .ok, headers: object.headers,
                body: .bytes(ByteBuffer(bytes: request.method == "GET" ? object.bytes : [])))
        case "PUT":
            let body = request.body ?? []
            let digest = Array(SHA256.hash(data: body))
            guard request.header("x-amz-content-sha256") == Hex.encode(digest) else {
                return error(400, "XAmzContentSHA256Mismatch")
            }
            if let checksum = request.header("x-amz-checksum-sha256"), checksum != Data(digest).base64EncodedString() {
                return error(400, "BadDigest")
            }
            if request.header("If-None-Match") == "*", state.objects[key] != nil {
                return error(412, "PreconditionFailed")
            }
            var stored = HTTPHeaders()
            for (name, value) in request.headers {
                let lowered = name.lowercased()
                if lowered.hasPrefix("x-amz-meta-")
                    || ["content-type", "cache-control", "content-encoding"]
                        .contains(lowered)
                {
                    stored.add(name: lowered, value: value)
                }
            }
            state.objects[key] = Object(bytes: body, headers: stored)
            checkManifest(in: &state, after: request, manifestKey: manifestKey)
            return HTTPClientResponse(status: .ok)
        default:
            return error(405, "MethodNotAllowed")
        }
    }

    /// Records a violation when the manifest names an object that is missing or holds other bytes.
    private static func checkManifest(in state: inout State, after request: ReceivedRequest, manifestKey: String) {
        guard let bytes = state.objects[manifestKey]?.bytes else { return }
        guard let manifest = try? Manifest(parsing: bytes) else {
            state.violations.append("after \(request): the manifest does not parse")
            return
        }
        let prefix = String(manifestKey.dropLast(Manifest.name.count))
        for entry in manifest.entries.values {
            let found = state.objects[prefix + entry.path]
            if found == nil || found?.sha256 != entry.sha256
                || found.map({ Hex.encode(SHA256.hash(data: $0.bytes)) }) != entry.sha256
            {
                state.violations.append("after \(request): the manifest names \(entry.path), which holds other bytes")
            }
        }
    }
}

/// S3's error document with `code`.
private func error(_ status: Int, _ code: String) -> HTTPClientResponse {
    HTTPClientResponse(
        status: HTTPResponseStatus(statusCode: status), headers: HTTPHeaders([("Content-Type", "application/xml")]),
        body: .bytes(ByteBuffer(string: "<Error><Code>\(code)</Code><Message>fake S3</Message></Error>")))
}
