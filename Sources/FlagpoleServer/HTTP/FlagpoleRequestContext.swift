import FlagpoleStore
import Hummingbird
import NIOCore

/// Hummingbird's basic context and the peer's address, which the per-client limit on new users
/// keys by; and what the authenticating middleware of the route's group found, for the route's
/// own context (see `RequestContexts.swift`) to check.
public struct FlagpoleRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The connection's peer: the client, or the proxy in front of the server.
    public let remoteAddress: SocketAddress?
    /// The API key of the request, looked up by `KeyMiddleware`; `nil` on routes outside it.
    var presentedKey: PresentedKey?
    /// The dashboard session of the request, looked up by `SessionMiddleware`; `nil` outside it.
    var presentedSession: PresentedSession?
    /// What `DeliveryAccessMiddleware` let through, and the need that admitted it; `nil` outside it.
    var deliveryAccess: (DeliveryAccess, need: ObjectIdentifier)?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
