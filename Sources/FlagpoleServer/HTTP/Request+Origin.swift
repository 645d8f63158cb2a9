import HTTPTypes
import Hummingbird

/// Where a request reached the server from the client's side: over TLS or not, and at which
/// address. The dashboard's cookies and the member links of the API and the dashboard read it.
extension Request {
    /// Whether the browser's connection is TLS: the request's own scheme, or the
    /// `X-Forwarded-Proto` of the proxy in front. A forged header only makes a cookie stricter,
    /// or a link its caller asked for `https`.
    var isOverTLS: Bool {
        head.scheme?.lowercased() == "https" || headers[.forwardedProto]?.lowercased() == "https"
    }

    /// Where this server was reached, `http(s)://host:port`, for the links it hands out.
    var serverURL: String {
        "\(isOverTLS ? "https" : "http")://\(head.authority ?? "localhost")"
    }
}

extension HTTPField.Name {
    static let forwardedProto = HTTPField.Name("X-Forwarded-Proto")!
}
