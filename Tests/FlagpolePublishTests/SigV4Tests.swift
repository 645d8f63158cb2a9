import Crypto
import FlagpoleCore
import Foundation
import Testing

@testable import FlagpolePublish

/// The signer against botocore's `S3SigV4Auth`, byte for byte, on the requests of
/// `Tests/Fixtures/sigv4/botocore-s3.json` (made by `Scripts/check-publish.d/sigv4_cases.py`
/// with a fixed clock; `Scripts/check-publish` makes it again with the installed botocore and
/// fails if it differs).
@Suite("SigV4 signing, as botocore signs")
struct SigV4Tests {
    struct Case: Decodable, CustomTestStringConvertible {
        struct Expected: Decodable {
            var canonicalRequest: String
            var stringToSign: String
            var authorization: String
            var addedHeaders: [[String]]
        }
        var name: String
        var method: String
        var url: String
        var headers: [[String]]
        var bodyBase64: String
        var accessKeyID: String
        var secretAccessKey: String
        var sessionToken: String?
        var region: String
        var service: String
        var time: String
        var expected: Expected

        var testDescription: String { name }
    }

    struct Fixture: Decodable {
        var generator: String
        var cases: [Case]
    }

    static let fixture: Fixture = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/sigv4/botocore-s3.json")
        return try! JSONDecoder().decode(Fixture.self, from: Data(contentsOf: url))
    }()

    /// `host[:port]` as the Host header carries it (no default port), the raw path and the raw query.
    static func parts(of url: String) -> (host: String, path: String, query: String) {
        let scheme = url.hasPrefix("https://") ? "https" : "http"
        let rest = url.dropFirst(scheme.count + 3)
        let authority = String(rest.prefix { $0 != "/" })
        let target = rest.dropFirst(authority.count)
        let path = String(target.prefix { $0 != "?" })
        let query = String(target.dropFirst(path.count).dropFirst())
        var host = authority.lowercased()
        if host.hasSuffix(scheme == "https" ? ":443" : ":80") { host = String(host[..<host.lastIndex(of: ":")!]) }
        return (host, path, query)
    }

    static func date(_ text: String) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let digits = text.filter(\.isNumber).map { Int(String($0))! }
        func number(_ range: Range<Int>) -> Int { digits[range].reduce(0) { $0 * 10 + $1 } }
        return calendar.date(
            from: DateComponents(
                year: number(0..<4), month: number(4..<6), day: number(6..<8), hour: number(8..<10),
                minute: number(10..<12), second: number(12..<14)))!
    }

    @Test("The fixture was made by botocore and covers what S3 signing must get right")
    func fixtureCoversTheCases() {
        let cases = Self.fixture.cases
        #expect(Self.fixture.generator.hasPrefix("botocore "))
        #expect(cases.count >= 100)
        #expect(cases.contains { $0.sessionToken != nil } && cases.contains { $0.sessionToken == nil })
        #expect(cases.contains { $0.bodyBase64.isEmpty } && cases.contains { !$0.bodyBase64.isEmpty })
        #expect(cases.contains { $0.url.contains("?") } && cases.contains { $0.url.contains("%") })
        #expect(cases.contains { $0.url.contains("//") && $0.url.split(separator: "/").count > 3 })
        #expect(Set(cases.map(\.method)).isSuperset(of: ["GET", "PUT", "HEAD"]))
    }

    @Test(
        "Every case signs to botocore's canonical request, string to sign and Authorization", arguments: fixture.cases)
    func signsAsBotocore(_ test: Case) {
        let body = [UInt8](Data(base64Encoded: test.bodyBase64)!)
        let (host, path, query) = Self.parts(of: test.url)
        let signer = SigV4Signer(
            credentials: AWSCredentials(
                accessKeyID: test.accessKeyID, secretAccessKey: test.secretAccessKey, sessionToken: test.sessionToken,
                source: "test"),
            region: test.region, service: test.service)
        let signature = signer.sign(
            SigV4Signer.Request(
                method: test.method, host: host, path: path, query: query,
                headers: test.headers.map { ($0[0], $0[1]) }, payloadSHA256: Hex.encode(SHA256.hash(data: body))),
            at: Self.date(test.time))
        #expect(signature.canonicalRequest == test.expected.canonicalRequest, "\(test.name)")
        #expect(signature.stringToSign == test.expected.stringToSign, "\(test.name)")
        let added = signature.headers.dropLast().map { [$0.name, $0.value] }
        #expect(added == test.expected.addedHeaders, "\(test.name)")
        #expect(signature.headers.last?.name == "Authorization")
        #expect(signature.headers.last?.value == test.expected.authorization, "\(test.name)")
    }

    @Test("Keys are encoded once: every byte but unreserved characters and / as %XX")
    func keyEncoding() {
        #expect(SigV4Signer.encodePath("a b+c=d&e/ü/%/~._-") == "a%20b%2Bc%3Dd%26e/%C3%BC/%25/~._-")
        #expect(SigV4Signer.encodePath("a//b/../x") == "a//b/../x")
        #expect(SigV4Signer.encodeQuery("a/b c") == "a%2Fb%20c")
    }
}
