import Crypto
import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird

/// A signed-in browser: the key it acts with, and the token its cookie carries.
struct DashboardSession: Sendable {
    static let cookieName = "flagpole_session"

    let identity: KeyIdentity
    let token: String

    /// The token every form of this session carries. It is derived from the session's secret
    /// cookie, which a page of another site can neither read nor send (SameSite=Strict), so it
    /// needs no storage and dies with the session.
    var csrfToken: String { Self.hexDigest(of: "csrf:" + token) }

    /// Refuses a form whose token is not this session's.
    ///
    /// - throws: `DashboardError.forgedForm`.
    func verify(csrf presented: String) throws {
        guard ConstantTime.isEqual(presented.utf8, csrfToken.utf8) else { throw DashboardError.forgedForm }
    }

    static func hexDigest(of text: String) -> String {
        SHA256.hash(data: Array(text.utf8)).hexEncoded
    }
}

extension Cookie {
    /// A dashboard cookie: HttpOnly and SameSite=Strict always, Secure when the browser
    /// reached the server over TLS (directly, or through a proxy that says so).
    static func dashboard(_ name: String, value: String, maxAge: Int, for request: Request) -> Cookie {
        Cookie(
            name: name, value: value, maxAge: maxAge, path: "/", secure: request.isOverTLS, httpOnly: true,
            sameSite: .strict)
    }
}
