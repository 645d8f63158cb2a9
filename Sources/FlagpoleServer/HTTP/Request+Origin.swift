import Foundation
import HTTPTypes
import Hummingbird

/// Where a request reached the server from the client's side: over TLS or not, at which
/// address, and from which client. The dashboard's cookies, the member links of the API and the
/// dashboard, sign-ins and trigger calls read it.
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

    /// The client's address: the peer, or with `trustsProxy` the last address of
    /// `X-Forwarded-For` (the one the proxy in front appended).
    func clientAddress(_ context: some RemoteAddressRequestContext, trustsProxy: Bool) -> String {
        if trustsProxy, let forwarded = headers[.xForwardedFor]?.split(separator: ",").last {
            return forwarded.trimmingCharacters(in: .whitespaces)
        }
        return context.remoteAddress?.ipAddress ?? "unknown"
    }
}

extension HTTPField.Name {
    static let forwardedProto = HTTPField.Name("X-Forwarded-Proto")!
}
