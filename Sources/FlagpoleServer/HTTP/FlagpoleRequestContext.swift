import Hummingbird
import NIOCore

/// Hummingbird's basic context and the peer's address, which the per-client limit on new users
/// keys by.
public struct FlagpoleRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The connection's peer: the client, or the proxy in front of the server.
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}
