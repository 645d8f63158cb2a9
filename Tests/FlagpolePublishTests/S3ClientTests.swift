import AsyncHTTPClient
import Crypto
import FlagpoleCore
import Foundation
import NIOCore
import NIOHTTP1
import Testing

@testable import FlagpolePublish

/// `S3Client`'s decisions, one request at a time through a scripted transport: what goes on the
/// wire for each operation and addressing style, that what is sent is what is signed (as botocore
/// signs it), and which answers are sent again, how often, and which never are.
@Suite("The S3 client: requests, signatures, retries")
struct S3ClientTests {
    /// 2026-11-18T11:06:40Z: requests are signed at a fixed time, so signatures can be compared.
    static let signingTime = Date(timeIntervalSince1970: 1_795_000_000)
    static let credentials = AWSCredentials(
        accessKeyID: "AKIAFLAGPOLETEST", secretAccessKey: "never-shown-secret", source: "the test's credentials")
    /// Retries without waiting: the waits are `RetryPolicy.delay`'s, checked on their own.
    static func retries(_ attempts: Int) -> RetryPolicy {
        RetryPolicy(attempts: attempts, firstDelay: .zero, longest: .zero, timeout: .milliseconds(1500))
    }

    func client(
        _ transport: any HTTPTransport, endpoint: String? = "http://127.0.0.1:9000", region: String = "us-east-1",
        bucket: String = "flags", addressing: S3Addressing = .auto,
        credentials: AWSCredentials = S3ClientTests.credentials, attempts: Int = 3,
        at time: Date = S3ClientTests.signingTime
    ) throws -> S3Client {
        var target = try S3Target(parsing: "s3://flags/mobile")
        // S3Target refuses names S3 no longer allows for new buckets; botocore's cases have some ("b0").
        target.bucket = bucket
        return try S3Client(
            target: target,
            configuration: AWSConfiguration(credentials: credentials, region: region, endpoint: endpoint),
            addressing: addressing, transport: transport, retries: Self.retries(attempts), now: { time })
    }

    /// The signature headers the client's signer gives a request, to compare with what it sent.
    func signature(
        _ method: String, host: String, path: String, headers: [(name: String, value: String)] = [],
        body: [UInt8] = [], credentials: AWSCredentials = S3ClientTests.credentials, region: String = "us-east-1"
    ) -> [(name: String, value: String)] {
        SigV4Signer(credentials: credentials, region: region).sign(
            SigV4Signer.Request(
                method: method, host: host, path: path, headers: headers,
                payloadSHA256: Hex.encode(SHA256.hash(data: body))),
            at: Self.signingTime
        ).headers
    }

    static func pairs(_ headers: HTTPHeaders) -> [[String]] { headers.map { [$0.name, $0.value] } }

    // MARK: - What goes on the wire

    @Test("A PUT, path-style: the key encoded once, Host, the caller's headers, If-None-Match, then the signature")
    func putPathStyle() async throws {
        let transport = ScriptedTransport([.ok])
        let body = Array("{\"features\": []}\n".utf8)
        let headers = [(name: "Content-Type", value: "application/json"), (name: "x-amz-meta-sha256", value: "ab")]
        let written = try await client(transport).put(
            "mobile/a b/ü+.json", bytes: body, headers: headers, ifAbsent: true)
        #expect(written)
        let sent = try #require(transport.received.first)
        #expect(transport.received.count == 1)
        #expect(sent.method == "PUT")
        #expect(sent.url == "http://127.0.0.1:9000/flags/mobile/a%20b/%C3%BC%2B.json", "no query, no second encoding")
        #expect(sent.body == body)
        let signed = headers + [(name: "If-None-Match", value: "*")]
        let expected =
            [["Host", "127.0.0.1:9000"]] + signed.map { [$0.name, $0.value] }
            + signature(
                "PUT", host: "127.0.0.1:9000", path: "/flags/mobile/a%20b/%C3%BC%2B.json", headers: signed, body: body
            )
            .map { [$0.name, $0.value] }
        #expect(Self.pairs(sent.headers) == expected)
        #expect(sent.header("X-Amz-Date") == "20261118T110640Z")
        #expect(sent.header("X-Amz-Content-SHA256") == Hex.encode(SHA256.hash(data: body)))
        #expect(
            sent.header("Authorization")?.hasPrefix(
                "AWS4-HMAC-SHA256 Credential=AKIAFLAGPOLETEST/20261118/us-east-1/s3/aws4_request, SignedHeaders="
                    + "content-type;host;if-none-match;x-amz-content-sha256;x-amz-date;x-amz-meta-sha256, Signature=")
                == true)
        #expect(sent.timeout == .milliseconds(1500), "each send may take the policy's timeout, no more")
    }

    @Test("GET and HEAD send no body, sign the empty payload, and add no header of their own")
    func getAndHead() async throws {
        let transport = ScriptedTransport([.status(200, body: Array("bytes".utf8))])
        let s3 = try client(transport)
        #expect(try await s3.get("mobile/manifest.json") == Array("bytes".utf8))
        _ = try await s3.head("mobile/manifest.json")
        let emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        for (sent, method) in zip(transport.received, ["GET", "HEAD"]) {
            #expect(sent.method == method)
            #expect(sent.url == "http://127.0.0.1:9000/flags/mobile/manifest.json")
            #expect(sent.body == nil)
            #expect(sent.header("X-Amz-Content-SHA256") == emptySHA256)
            let expected =
                [["Host", "127.0.0.1:9000"]]
                + signature(method, host: "127.0.0.1:9000", path: "/flags/mobile/manifest.json").map {
                    [$0.name, $0.value]
                }
            #expect(Self.pairs(sent.headers) == expected)
        }
        #expect(transport.received.count == 2)
    }

    @Test("A session token is sent and signed between X-Amz-Date and X-Amz-Content-SHA256")
    func sessionToken() async throws {
        let transport = ScriptedTransport([.ok])
        let temporary = AWSCredentials(
            accessKeyID: "ASIAFLAGPOLETEST", secretAccessKey: "s", sessionToken: "token/+=", source: "test")
        _ = try await client(transport, credentials: temporary).get("k")
        let names = try #require(transport.received.first).headers.map(\.name)
        #expect(names == ["Host", "X-Amz-Date", "X-Amz-Security-Token", "X-Amz-Content-SHA256", "Authorization"])
        #expect(transport.received.first?.header("X-Amz-Security-Token") == "token/+=")
        #expect(
            transport.received.first?.header("Authorization")?.contains(
                "SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token,") == true)
    }

    @Test(
        "Addressing: virtual-hosted at AWS, path-style for a dotted bucket or a custom endpoint, virtual when forced",
        arguments: [
            (nil, "flags", S3Addressing.auto, "https://flags.s3.eu-west-1.amazonaws.com/mobile/x.json"),
            (nil, "flags", .path, "https://s3.eu-west-1.amazonaws.com/flags/mobile/x.json"),
            (nil, "cdn.example.com", .auto, "https://s3.eu-west-1.amazonaws.com/cdn.example.com/mobile/x.json"),
            ("https://minio.test", "flags", .auto, "https://minio.test/flags/mobile/x.json"),
            ("http://minio.test:9000", "flags", .virtual, "http://flags.minio.test:9000/mobile/x.json"),
            ("https://minio.test:443", "flags", .virtual, "https://flags.minio.test/mobile/x.json"),
            ("http://[::1]:9000", "flags", .auto, "http://[::1]:9000/flags/mobile/x.json"),
        ] as [(String?, String, S3Addressing, String)])
    func addressing(_ example: (endpoint: String?, bucket: String, addressing: S3Addressing, url: String)) async throws
    {
        let (endpoint, bucket, addressing, url) = example
        let transport = ScriptedTransport([.ok])
        let s3 = try client(transport, endpoint: endpoint, region: "eu-west-1", bucket: bucket, addressing: addressing)
        _ = try await s3.head("mobile/x.json")
        let sent = try #require(transport.received.first)
        #expect(sent.url == url)
        let (host, path, _) = SigV4Tests.parts(of: url)
        #expect(sent.header("Host") == host, "the Host header is the URL's authority, without a default port")
        #expect(
            sent.header("Authorization") == signature("HEAD", host: host, path: path, region: "eu-west-1").last?.value)
    }

    // MARK: - Signatures, as botocore makes them

    /// A client set up as a botocore case's request was, and the case's host, path and query.
    typealias CaseClient = (client: S3Client, host: String, path: String, query: String)

    /// The client for a botocore case: its endpoint, addressing, bucket, region, credentials and time.
    func client(for test: SigV4Tests.Case, transport: any HTTPTransport = ScriptedTransport([.ok])) throws -> CaseClient
    {
        let (host, path, query) = SigV4Tests.parts(of: test.url)
        let scheme = test.url.hasPrefix("https://") ? "https" : "http"
        let authority = test.url.dropFirst(scheme.count + 3).prefix { $0 != "/" }
        let endpoint: String
        let bucket: String
        let addressing: S3Addressing
        if let virtual = authority.range(of: ".s3."),
            authority.hasSuffix(".amazonaws.com") || authority.contains(".amazonaws.com:")
        {
            // BUCKET.s3.REGION.amazonaws.com[:PORT]
            bucket = String(authority[..<virtual.lowerBound])
            endpoint = "\(scheme)://\(authority[authority.index(after: virtual.lowerBound)...])"
            addressing = .virtual
        } else {
            bucket = String(path.dropFirst().prefix { $0 != "/" })
            endpoint = "\(scheme)://\(authority)"
            addressing = .path
        }
        let credentials = AWSCredentials(
            accessKeyID: test.accessKeyID, secretAccessKey: test.secretAccessKey, sessionToken: test.sessionToken,
            source: "botocore's case")
        let s3 = try client(
            transport, endpoint: endpoint, region: test.region, bucket: bucket, addressing: addressing,
            credentials: credentials, at: SigV4Tests.date(test.time))
        return (s3, host, path, query)
    }

    @Test(
        "The request the client builds for each botocore case is the case, signed with botocore's Authorization",
        arguments: SigV4Tests.fixture.cases)
    func wireRequestOfEveryCase(_ test: SigV4Tests.Case) throws {
        let (s3, host, path, query) = try client(for: test)
        let body = [UInt8](Data(base64Encoded: test.bodyBase64)!)
        let headers = test.headers.map { (name: $0[0], value: $0[1]) }
        let request = s3.request(
            HTTPMethod(rawValue: test.method), path: path, query: query, headers: headers, body: body,
            sha256: Hex.encode(SHA256.hash(data: body)), at: SigV4Tests.date(test.time))
        let scheme = test.url.hasPrefix("https://") ? "https" : "http"
        #expect(request.url == "\(scheme)://\(host)\(path)\(query.isEmpty ? "" : "?\(query)")", "\(test.name)")
        #expect(request.method.rawValue == test.method)
        let expected =
            [["Host", host]] + test.headers + test.expected.addedHeaders + [
                ["Authorization", test.expected.authorization]
            ]
        #expect(Self.pairs(request.headers) == expected, "\(test.name): what is sent is what botocore signed")
        #expect((request.body != nil) == (test.method == "PUT"), "only a PUT has a body")
    }

    @Test(
        "Every botocore case that is one of the client's own requests goes through put or get with botocore's signature"
    )
    func operationsOfTheFixture() async throws {
        var checked: [String: Int] = [:]
        for test in SigV4Tests.fixture.cases {
            let transport = ScriptedTransport([.status(200)])
            let (s3, _, path, query) = try client(for: test, transport: transport)
            let encodedKey =
                s3.endpoint.pathStyle ? path.dropFirst(s3.target.bucket.count + 2) : path.dropFirst()
            // Requests of the bucket itself (`/BUCKET`, no key) and with a query are not the client's.
            guard query.isEmpty, !s3.endpoint.pathStyle || path.hasPrefix("/\(s3.target.bucket)/"),
                let key = String(encodedKey).removingPercentEncoding
            else { continue }
            #expect(SigV4Signer.encodePath(key) == encodedKey, "\(test.name): the key is encoded as botocore's was")
            let body = [UInt8](Data(base64Encoded: test.bodyBase64)!)
            switch test.method {
            case "PUT":
                _ = try await s3.put(key, bytes: body, headers: test.headers.map { (name: $0[0], value: $0[1]) })
            case "GET" where test.headers.isEmpty:
                _ = try await s3.get(key)
            case "HEAD" where test.headers.isEmpty:
                _ = try await s3.head(key)
            default:
                continue
            }
            let sent = try #require(transport.received.first)
            #expect(sent.header("Authorization") == test.expected.authorization, "\(test.name)")
            #expect(sent.body == (test.method == "PUT" ? body : nil), "\(test.name)")
            checked[test.method, default: 0] += 1
        }
        #expect(checked["PUT", default: 0] >= 10 && checked["GET", default: 0] >= 1, "\(checked)")
    }

    // MARK: - Retries

    @Test(
        "A transient failure is sent again, and the request succeeds when an answer does",
        arguments: [
            ScriptedAnswer.status(500), .status(502), .status(503, code: "SlowDown"), .status(429),
            .status(403, code: "AccessDenied"), .status(400, code: "RequestTimeout"), .noAnswer,
        ])
    func transientFailuresAreRetried(_ failure: ScriptedAnswer) async throws {
        let transport = ScriptedTransport([failure, failure, .ok])
        let s3 = try client(transport, attempts: 3)
        #expect(try await s3.put("k", bytes: [1], headers: []))
        #expect(transport.received.count == 3)
        #expect(s3.requestCounts == ["PUT": 3], "every send counts")
        // Each attempt sends the same request again, bytes included (the clock is fixed here).
        #expect(Set(transport.received.map { Self.pairs($0.headers) }).count == 1)
        #expect(transport.received.allSatisfy { $0.body == [1] })
    }

    @Test(
        "A transient failure is sent the policy's attempts in all, then reported with them",
        arguments: [
            (ScriptedAnswer.status(503, code: "SlowDown"), 503 as Int?, "SlowDown"),
            (.status(500), 500, "Internal Server Error"), (.status(403, code: "AccessDenied"), 403, "AccessDenied"),
            (.noAnswer, nil, "no answer"),
        ])
    func attemptsRunOut(_ example: (failure: ScriptedAnswer, status: Int?, code: String)) async throws {
        let (failure, status, code) = example
        let transport = ScriptedTransport([failure])
        let s3 = try client(transport, attempts: 4)
        let error = await #expect(throws: PublishError.self) { _ = try await s3.get("mobile/manifest.json") }
        guard case .storage(let s3Failure)? = error else {
            Issue.record("not a storage failure: \(String(describing: error))")
            return
        }
        #expect(transport.received.count == 4)
        #expect(s3Failure.attempts == 4 && s3Failure.status == status && s3Failure.code == code)
        #expect(s3Failure.method == "GET" && s3Failure.object == "s3://flags/mobile/manifest.json")
        #expect(s3Failure.description.contains("(after 4 attempts)"))
        #expect(error?.isWorthRetrying == (status != 403), "a 403 is retried within a run, not worth a new one")
    }

    @Test(
        "What is not transient is sent once: a bad request, a missing bucket, another region, a refused ACL",
        arguments: [
            (400, "InvalidArgument", "The next publish completes this one."),
            (400, "AuthorizationHeaderMalformed", "The bucket is in another region"),
            (301, "PermanentRedirect", "The bucket is in another region"),
            (404, "NoSuchBucket", "Create the bucket flags at http://127.0.0.1:9000 (aws s3 mb s3://flags)"),
            (400, "AccessControlListNotSupported", "drop --public-read"),
            (409, "OperationAborted", "The next publish completes this one."),
        ])
    func permanentFailuresAreNotRetried(_ example: (status: Int, code: String, hint: String)) async throws {
        let (status, code, hint) = example
        for operation in ["GET", "PUT"] {
            let transport = ScriptedTransport([.status(status, code: code), .ok])
            let s3 = try client(transport, attempts: 5)
            let error = await #expect(throws: PublishError.self) {
                if operation == "GET" {
                    _ = try await s3.get("k")
                } else {
                    _ = try await s3.put("k", bytes: [], headers: [])
                }
            }
            #expect(transport.received.count == 1, "\(operation) \(status) \(code)")
            guard case .storage(let failure)? = error else { continue }
            #expect(failure.status == status && failure.code == code && failure.attempts == 1)
            #expect(failure.hint.contains(hint), "\(failure.hint)")
            #expect(error?.isWorthRetrying == false)
        }
    }

    @Test("A refused signature's error names where the credentials came from, never the secret")
    func credentialHint() async throws {
        let transport = ScriptedTransport([.status(403, code: "SignatureDoesNotMatch")])
        let s3 = try client(transport, attempts: 2)
        let error = await #expect(throws: PublishError.self) { _ = try await s3.head("k") }
        let text = "\(String(describing: error))"
        #expect(text.contains("Check the credentials (read from the test's credentials)"))
        #expect(!text.contains("never-shown-secret"))
        #expect(transport.received.count == 2, "a 403 is retried: new keys are refused while IAM spreads them")
    }

    @Test("No answer at all says to check that the endpoint is reachable")
    func unreachable() async throws {
        let s3 = try client(ScriptedTransport([.noAnswer]), attempts: 2)
        let error = await #expect(throws: PublishError.self) { _ = try await s3.put("k", bytes: [], headers: []) }
        #expect("\(String(describing: error))".contains("Check that http://127.0.0.1:9000 is reachable"))
        #expect("\(String(describing: error))".contains("the server closed the connection"))
    }

    @Test("The answers an operation expects are not failures: 404 to GET and HEAD, 412 to a PUT if absent")
    func acceptedAnswers() async throws {
        let transport = ScriptedTransport([
            .status(404, code: "NoSuchKey"), .status(404), .status(412, code: "PreconditionFailed"),
            .status(200, headers: [("x-amz-meta-sha256", "abc")]),
        ])
        let s3 = try client(transport)
        #expect(try await s3.get("k") == nil)
        #expect(try await s3.head("k") == nil)
        #expect(try await s3.put("k", bytes: [], headers: [], ifAbsent: true) == false)
        #expect(try await s3.head("k")?.first(name: "x-amz-meta-sha256") == "abc")
        #expect(transport.received.count == 4, "none of them is sent again")
        #expect(s3.requestCounts == ["GET": 1, "HEAD": 2, "PUT": 1])
    }

    @Test("A 412 to a PUT that did not ask If-None-Match is a failure, sent once")
    func preconditionWithoutIfAbsent() async throws {
        let transport = ScriptedTransport([.status(412, code: "PreconditionFailed")])
        await #expect(throws: PublishError.self) {
            _ = try await client(transport).put("k", bytes: [], headers: [])
        }
        #expect(transport.received.count == 1)
        #expect(transport.received.first?.header("If-None-Match") == nil)
    }

    @Test("Waits double from the first delay up to the longest, each between half and all of it")
    func backoff() {
        let policy = RetryPolicy(
            attempts: 9, firstDelay: .milliseconds(200), longest: .seconds(5), timeout: .seconds(30))
        let full: [Duration] = [200, 400, 800, 1600, 3200, 5000, 5000, 5000].map { .milliseconds($0) }
        for (attempt, full) in zip(1..., full) {
            for _ in 0..<50 {
                let delay = policy.delay(after: attempt)
                #expect(delay >= full / 2 && delay <= full, "after attempt \(attempt): \(delay)")
            }
        }
        #expect(policy.delay(after: 64) <= .seconds(5), "no overflow after many attempts")
        let standard = RetryPolicy.standard
        #expect(standard.attempts == 5 && standard.firstDelay == .milliseconds(200))
        #expect(standard.longest == .seconds(5) && standard.timeout == .seconds(30))
    }

    @Test("S3's error code and message are read from its XML, entities decoded")
    func errorDocument() {
        let text =
            "<?xml version=\"1.0\"?><Error><Code>SlowDown</Code><Message>a &lt;b&gt; &amp; &quot;c&apos;</Message>"
        let body = Array((text + "</Error>").utf8)
        #expect(S3Client.errorCode(in: body) == "SlowDown")
        #expect(S3Client.errorMessage(in: body) == "a <b> & \"c'")
        #expect(S3Client.errorCode(in: []) == nil && S3Client.errorCode(in: Array("<html/>".utf8)) == nil)
    }
}
