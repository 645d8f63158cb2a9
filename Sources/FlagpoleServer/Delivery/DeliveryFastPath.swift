import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Metrics
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Answers `GET /t/{tenant}/{env}/features.json` of a public environment whose current
/// revision is rendered, on the connection's event loop, before the request reaches the router.
///
/// Apps poll this one URL (and CDNs revalidate it) far more than anything else. Through the
/// router each request becomes a task that hops between threads, which costs several times
/// what answering from memory does. This handler answers exactly what the router's delivery
/// route would (`DeliveryRoutes.answer`), and hands everything else to the router unchanged:
/// other paths, query strings, HEAD, `Connection: close`, private environments, cache misses, and any request
/// while an earlier one on the connection still awaits the router's answer (responses leave in
/// request order).
final class DeliveryFastPath: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let cache: DeliveryCache
    private let defaultCacheControl: String
    /// Requests handed to the router whose response has not ended yet.
    private var routed = 0
    /// The answer to the request being read, sent when its end arrives.
    private var pending: (HTTPResponse, ByteBuffer?)?

    init(cache: DeliveryCache, defaultCacheControl: String) {
        self.cache = cache
        self.defaultCacheControl = defaultCacheControl
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            if routed == 0, let answer = answer(request) {
                pending = answer
                return
            }
            routed += 1
        case .body:
            if pending != nil { return }
        case .end:
            if let (head, body) = pending {
                pending = nil
                send(head, body, context: context)
                return
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { routed -= 1 }
        context.write(data, promise: promise)
    }

    private func answer(_ request: HTTPRequest) -> (HTTPResponse, ByteBuffer?)? {
        // Closing or upgrading the connection is the router's business.
        guard request.method == .get, request.headerFields[.connection].map({ $0.lowercased() == "keep-alive" }) ?? true,
              let path = Self.environmentPath(request.path ?? ""),
              let (state, document) = cache.currentDocument(path), !state.settings.isPrivate, let document
        else { return nil }
        return DeliveryRoutes.answer(
            document, to: request.headerFields, cacheControl: DeliveryRoutes.currentCacheControl(state, default: defaultCacheControl))
    }

    private func send(_ head: HTTPResponse, _ body: ByteBuffer?, context: ChannelHandlerContext) {
        var head = head
        head.headerFields[.date] = HTTPDate.now
        head.headerFields[.server] = "flagpole"
        head.headerFields[.contentLength] = String(body?.readableBytes ?? 0)
        Self.counters[head.status.code]?.increment()
        DeliveryRoutes.cacheHits.increment()
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if let body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    /// The environment of `/t/{tenant}/{env}/features.json` exactly (no query), else `nil`.
    static func environmentPath(_ path: String) -> EnvironmentPath? {
        let parts = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1].elementsEqual("t".utf8), parts[4].elementsEqual("features.json".utf8),
              let tenant = String(parts[2]), let environment = String(parts[3])
        else { return nil }
        return EnvironmentPath(tenant: TenantSlug(rawValue: tenant), environment: EnvironmentName(rawValue: environment))
    }

    /// The router's request counts for this route, so `/metrics` counts every delivery.
    private static let counters: [Int: Counter] = Dictionary(uniqueKeysWithValues: [200, 304].map { status in
        (status, Counter(label: "hb.requests", dimensions: [
            ("http.route", "/t/{tenant}/{env}/features.json"), ("http.request.method", "GET"), ("http.response.status_code", String(status)),
        ]))
    })
}

/// The `Date` header's value, formatted once a second rather than once a response.
enum HTTPDate {
    private static let cached = Mutex<(second: Int, text: String)>((0, ""))

    static var now: String {
        let second = Int(Date().timeIntervalSince1970)
        return cached.withLock { cached in
            if cached.second != second {
                cached = (second, Date(timeIntervalSince1970: Double(second)).formatted(
                    Date.VerbatimFormatStyle(
                        format: "\(weekday: .abbreviated), \(day: .twoDigits) \(month: .abbreviated) \(year: .defaultDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits) GMT",
                        locale: Locale(identifier: "en_US_POSIX"), timeZone: TimeZone(identifier: "GMT")!, calendar: Calendar(identifier: .gregorian))))
            }
            return cached.text
        }
    }
}
