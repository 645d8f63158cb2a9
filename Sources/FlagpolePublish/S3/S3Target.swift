import Foundation

/// `s3://BUCKET[/PREFIX]`: where a publish goes, under any S3-compatible endpoint.
public struct S3Target: Sendable, Hashable, CustomStringConvertible {
    public var bucket: String
    /// Without leading or trailing `/`; empty for the bucket's root.
    public var prefix: String

    public init(parsing text: String) throws(PublishError) {
        guard text.hasPrefix("s3://") else {
            throw .badTarget("--to takes s3://BUCKET[/PREFIX], not \(text).")
        }
        let rest = text.dropFirst("s3://".count)
        let bucket = String(rest.prefix { $0 != "/" })
        // S3's rules for new buckets: 3 to 63 lowercase letters, digits, dots and hyphens,
        // beginning and ending with a letter or digit.
        let allowed = bucket.allSatisfy { ($0.isASCII && ($0.isLowercase || $0.isNumber)) || $0 == "." || $0 == "-" }
        guard (3...63).contains(bucket.count), allowed, bucket.first!.isLetter || bucket.first!.isNumber,
            bucket.last!.isLetter || bucket.last!.isNumber
        else {
            throw .badTarget(
                "\(bucket.isEmpty ? "The bucket's name is missing" : "\"\(bucket)\" is not a bucket name") in \(text): S3 bucket names have 3 to 63 lowercase letters, digits, dots and hyphens."
            )
        }
        self.bucket = bucket
        self.prefix = rest.dropFirst(bucket.count).split(separator: "/").joined(separator: "/")
    }

    public var description: String { prefix.isEmpty ? "s3://\(bucket)" : "s3://\(bucket)/\(prefix)" }

    /// The object key of `path`, a path under the prefix.
    public func key(_ path: String) -> String { prefix.isEmpty ? path : "\(prefix)/\(path)" }
}

/// How a bucket is named in a URL.
public enum S3Addressing: String, Sendable, CaseIterable {
    /// Path-style for a custom endpoint (MinIO, moto and most S3-compatible servers want it),
    /// virtual-hosted for AWS's own unless the bucket's name has a dot (TLS would not match).
    case auto
    /// `https://endpoint/BUCKET/KEY`.
    case path
    /// `https://BUCKET.endpoint/KEY`.
    case virtual
}

/// The server requests go to, and how a bucket and key become a URL there.
struct S3Endpoint: Sendable {
    var scheme: String
    var host: String
    var port: Int?
    var pathStyle: Bool

    /// `endpoint` (a URL) or AWS's own for `region`.
    init(endpoint: String?, region: String, bucket: String, addressing: S3Addressing) throws(PublishError) {
        if let endpoint {
            guard let url = URLComponents(string: endpoint), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty,
                url.path.isEmpty || url.path == "/", url.query == nil, url.user == nil
            else {
                throw .badTarget(
                    "The endpoint \(endpoint) is not a server's URL: write it as http(s)://HOST[:PORT], with no path (--endpoint or AWS_ENDPOINT_URL)."
                )
            }
            (self.scheme, self.host, self.port) = (scheme, host, url.port)
            pathStyle = addressing != .virtual
        } else {
            (scheme, host, port) = ("https", "s3.\(region).amazonaws.com", nil)
            pathStyle = addressing == .path || (addressing == .auto && bucket.contains("."))
        }
    }

    var defaultPort: Int { scheme == "https" ? 443 : 80 }

    /// The `Host` header of `bucket`'s requests: no port when it is the scheme's.
    func hostHeader(bucket: String) -> String {
        let name = pathStyle ? host : "\(bucket).\(host)"
        guard let port, port != defaultPort else { return name }
        return "\(name):\(port)"
    }

    /// The path of `key` in `bucket`, encoded once.
    func path(bucket: String, key: String) -> String {
        let encoded = SigV4Signer.encodePath(key)
        return pathStyle ? "/\(bucket)/\(encoded)" : "/\(encoded)"
    }

    func url(bucket: String, path: String) -> String {
        "\(scheme)://\(hostHeader(bucket: bucket))\(path)"
    }

    /// `https://HOST[:PORT]`, to name the endpoint in messages and the publish log.
    var origin: String {
        guard let port, port != defaultPort else { return "\(scheme)://\(host)" }
        return "\(scheme)://\(host):\(port)"
    }
}
