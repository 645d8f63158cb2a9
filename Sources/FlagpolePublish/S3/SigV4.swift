import Crypto
import FlagpoleCore
import Foundation

/// AWS Signature Version 4 as S3 checks it: the `Authorization` header of a request whose
/// payload is signed (its SHA-256 in `x-amz-content-sha256`, never `UNSIGNED-PAYLOAD`).
///
/// S3's rules differ from other services' in one place: the path is signed exactly as sent,
/// neither normalised nor encoded a second time, so `a//b` and `../x` are keys like any other.
/// Checked byte for byte against botocore's `S3SigV4Auth` (`Tests/Fixtures/sigv4`).
struct SigV4Signer: Sendable {
    /// A request as it goes on the wire, before signing.
    struct Request {
        var method: String
        /// `host` or `host:port`, as the `Host` header carries it (no default port).
        var host: String
        /// The path as sent: already percent-encoded once.
        var path: String
        /// The query as sent, without `?`: already encoded; empty for none.
        var query: String = ""
        var headers: [(name: String, value: String)] = []
        /// The hex SHA-256 of the body (of no bytes for an empty body).
        var payloadSHA256: String
    }

    /// What signing produced: the headers to add, in this order, and its steps for diagnosis.
    struct Signature {
        var headers: [(name: String, value: String)]
        var canonicalRequest: String
        var stringToSign: String
    }

    let credentials: AWSCredentials
    let region: String
    var service = "s3"

    /// Headers that proxies may add, drop or change (hop-by-hop ones among them), which botocore
    /// leaves out of the signature too.
    private static let unsigned: Set<String> = [
        "connection", "expect", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
        "transfer-encoding", "upgrade", "user-agent", "x-amzn-trace-id",
    ]

    func sign(_ request: Request, at date: Date) -> Signature {
        let time = Self.timestamp(date)
        let day = String(time.prefix(8))
        var added: [(name: String, value: String)] = [("X-Amz-Date", time)]
        if let token = credentials.sessionToken { added.append(("X-Amz-Security-Token", token)) }
        added.append(("X-Amz-Content-SHA256", request.payloadSHA256))

        // Lowercased names, values with their runs of whitespace folded, repeated names joined by commas.
        var signed: [String: [String]] = [:]
        for (name, value) in request.headers + added {
            let name = name.lowercased()
            guard !Self.unsigned.contains(name) else { continue }
            signed[name, default: []].append(value.split(whereSeparator: \.isWhitespace).joined(separator: " "))
        }
        if signed["host"] == nil { signed["host"] = [request.host] }
        let names = signed.keys.sorted(by: Self.codePointOrder)
        let canonicalHeaders = names.map { "\($0):\(signed[$0]!.joined(separator: ","))" }.joined(separator: "\n")
        let signedHeaders = names.joined(separator: ";")

        let canonicalRequest = [
            request.method.uppercased(), request.path, Self.canonicalQuery(request.query),
            canonicalHeaders + "\n", signedHeaders, request.payloadSHA256,
        ].joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = [
            "AWS4-HMAC-SHA256", time, scope, Hex.encode(SHA256.hash(data: Array(canonicalRequest.utf8))),
        ].joined(separator: "\n")

        var key = SymmetricKey(data: Array("AWS4\(credentials.secretAccessKey)".utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        let signature = Hex.encode(HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: key))
        added.append(
            (
                "Authorization",
                "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
            ))
        return Signature(headers: added, canonicalRequest: canonicalRequest, stringToSign: stringToSign)
    }

    /// `key=value` pairs sorted by key then value, as sent (the caller encodes them once).
    static func canonicalQuery(_ query: String) -> String {
        guard !query.isEmpty else { return "" }
        let pairs = query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> (String, String) in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
        }
        return pairs.sorted { $0.0 == $1.0 ? codePointOrder($0.1, $1.1) : codePointOrder($0.0, $1.0) }
            .map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    /// `20261123T192000Z`: the request's time in UTC, to the second.
    static func timestamp(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ value: Int?) -> String { value! < 10 ? "0\(value!)" : "\(value!)" }
        return
            "\(parts.year!)\(two(parts.month))\(two(parts.day))T\(two(parts.hour))\(two(parts.minute))\(two(parts.second))Z"
    }

    /// Encodes an object key for a path: every byte but `A-Z a-z 0-9 - _ . ~` and `/` as `%XX`.
    static func encodePath(_ key: String) -> String {
        encode(key, keeping: UInt8(ascii: "/"))
    }

    /// Encodes a query key or value: every byte but `A-Z a-z 0-9 - _ . ~` as `%XX`.
    static func encodeQuery(_ value: String) -> String {
        encode(value, keeping: nil)
    }

    private static func encode(_ text: String, keeping extra: UInt8?) -> String {
        var out: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
                UInt8(ascii: "~"):
                out.append(byte)
            case extra:
                out.append(byte)
            default:
                let digits = Array("0123456789ABCDEF".utf8)
                out += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Python's string order (by code point), which botocore sorts with: UTF-8 bytes sort the same.
    private static func codePointOrder(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }
}
