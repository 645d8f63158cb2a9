import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Metrics
import NIOCore
import NIOHTTPTypes
import Synchronization

/// Answers `GET /t/{tenant}/{env}/features.json` and `…/configs.json` of a public environment, on
/// the connection's event loop, before the request reaches the router: the shared document from
/// memory, and a user's own (`?user=ID`) from one read of the store on this thread; and OFREP's
/// `POST`s and the Bucketeer SDK's `get_evaluations` for users whose groups are on record
/// (`OFREPRoutes.answer`, `bulkAnswer`, `BucketeerEvaluationsAnswer.answer`), their small body
/// collected here first.
///
/// Apps poll these URLs (and CDNs revalidate them) far more than anything else. Through the
/// router each request becomes a task that hops between threads, which costs several times
/// what answering here does. This handler answers exactly what the router's delivery route
/// would (`DeliveryRoutes.answer`, `DeliveryRoutes.pinnedAnswer`), and hands everything else to
/// the router unchanged: other paths and queries, HEAD, `Connection: close`, requests with a
/// key (but Bucketeer polls, whose key a public environment ignores), private environments, cache misses, a revision whose plan is not built, a failed read,
/// and any request while an earlier one on the connection still awaits the router's answer
/// (responses leave in request order).
///
/// A user new to some test needs their first assignments recorded before the answer: those go
/// to the store's group commit, and the answer is sent from this loop once it has committed.
/// Meanwhile later requests on the connection wait here, in order.
final class DeliveryFastPath: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// A response ready to send.
    typealias Answer = (head: HTTPResponse, body: ByteBuffer?)

    private let delivery: DeliveryRoutes
    /// Requests handed to the router whose response has not ended yet.
    private var routed = 0
    /// The request being answered here: its answer once known.
    private var current: Current?
    /// Parts of later requests that arrived while an answer was awaited from the store.
    private var held: [HTTPRequestPart] = []
    /// The route of the request being answered here, for the request counts.
    private var currentRoute = Route.features

    private enum Current {
        /// An evaluation whose body is arriving.
        case collecting(HTTPRequest, Evaluation, body: ByteBuffer)
        /// Sent when the request's end arrives.
        case answered(Answer)
        /// Awaiting the store's commit; `hasEnded` once the request's end has arrived.
        case awaiting(HTTPRequest, hasEnded: Bool)
    }

    /// The evaluations answered here.
    private enum Evaluation {
        case ofrep(OFREPTarget)
        /// A Bucketeer SDK's poll of a public environment.
        case bucketeer(EnvironmentPath)

        var path: EnvironmentPath {
            switch self {
            case .ofrep(let target): target.path
            case .bucketeer(let path): path
            }
        }
    }

    /// The largest evaluation body collected here; a larger one is the router's.
    static let maxBodySize = OFREPRoutes.maxBodySize

    init(delivery: DeliveryRoutes) {
        self.delivery = delivery
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        read(unwrapInboundIn(data), context: context)
    }

    private func read(_ part: HTTPRequestPart, context: ChannelHandlerContext) {
        if case .collecting(let request, let target, var body) = current {
            switch part {
            case .body(let chunk) where body.readableBytes + chunk.readableBytes <= Self.maxBodySize:
                body.writeImmutableBuffer(chunk)
                current = .collecting(request, target, body: body)
            case .end:
                current = nil
                if let answer = evaluationAnswer(request, target, body: body) {
                    delivery.metrics.evaluationsOnEventLoop.increment()
                    send(answer, context: context)
                } else {
                    handOver(request, body: body, ended: true, context: context)
                }
            default:
                // A body too large for an evaluation: the router says so.
                current = nil
                handOver(request, body: body, ended: false, context: context)
                context.fireChannelRead(wrapInboundOut(part))
            }
            return
        }
        if case .awaiting(let request, let hasEnded) = current {
            switch part {
            case .body where !hasEnded: return
            case .end where !hasEnded: current = .awaiting(request, hasEnded: true)
            default: held.append(part)
            }
            return
        }
        switch part {
        case .head(let request):
            if routed == 0, let answer = answer(request, context: context) {
                current = answer
                return
            }
            routed += 1
        case .body:
            if current != nil { return }
        case .end:
            if case .answered(let answer) = current {
                current = nil
                send(answer, context: context)
                return
            }
        }
        context.fireChannelRead(wrapInboundOut(part))
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { routed -= 1 }
        context.write(data, promise: promise)
    }

    // MARK: Answers

    private func answer(_ request: HTTPRequest, context: ChannelHandlerContext) -> Current? {
        if request.method == .post { return evaluationRequest(request) }
        // Closing or upgrading the connection is the router's business.
        guard request.method == .get,
            request.headerFields[.connection].map({ $0.lowercased() == "keep-alive" }) ?? true,
            let target = request.path
        else { return nil }
        if !target.utf8.contains(UInt8(ascii: "?")) {
            guard let (path, kind) = Self.delivered(target),
                let (state, document) = delivery.cache.currentDocument(path, kind),
                !state.settings.isPrivate, let document
            else { return nil }
            delivery.metrics.cacheHits.increment()
            delivery.fetches.count(path, revision: document.revision, .shared)
            currentRoute = kind == .features ? .features : .configs
            return .answered(
                DeliveryRoutes.answer(
                    document, to: request.headerFields,
                    cacheControl: DeliveryRoutes.currentCacheControl(state, default: delivery.defaultCacheControl)))
        }
        return userAnswer(request, target: URI(target), context: context)
    }

    /// `?user=ID` (and `attr.NAME=` attributes) alone, without a key, on a public environment whose
    /// revision is planned.
    ///
    /// The read runs on this event loop, which NIO asks never to block: it is one statement on a
    /// WAL reader, which waits for no writer, probing an index per test, shorter than answering
    /// the request itself. Handing it to another thread and back cost more than the read.
    private func userAnswer(_ request: HTTPRequest, target: URI, context: ChannelHandlerContext) -> Current? {
        let parameters = target.queryParameters
        // Refused attributes are the router's to answer (413, 422).
        let attributes: UserAttributes?
        do {
            attributes = try Query(parameters: parameters).attributes(limits: delivery.attributeLimits)
        } catch {
            return nil
        }
        // Without a key the caller is anonymous, and limited; anything else is the router's to judge.
        guard let text = parameters.get("user"), DeliveryCredential(request.headerFields) == .none,
            parameters.allSatisfy({ $0.key == "user" || $0.key.hasPrefix(UserAttributes.queryPrefix) }),
            let (path, kind) = Self.delivered(target.path), let (state, _) = delivery.cache.currentDocument(path),
            !state.settings.isPrivate,
            let user = try? UserID(validating: String(text)),
            let read = try? delivery.store.assignments.readUserDocumentNow(for: user, in: path, attributes: attributes)
        else { return nil }
        delivery.metrics.userDocumentsOnEventLoop.increment()
        currentRoute = kind == .features ? .features : .configs
        let headers = request.headerFields
        let fetches = delivery.fetches
        let delivery = delivery
        @Sendable func answer(_ read: UserDocumentRead) -> Answer {
            fetches.count(path, revision: read.revision, kind == .features ? .pinned : .configs)
            switch kind {
            case .features: return delivery.pinnedAnswer(read.document(), to: headers)
            case .configs:
                let configs = read.configs()
                return delivery.pinnedAnswer(
                    revision: configs.revision, bytes: configs.bytes, isRecorded: configs.isRecorded, to: headers)
            }
        }
        let client: UserClient = kind == .features ? .app : .follower
        if read.isComplete(for: client) { return .answered(answer(read)) }
        // Groups to record (or to mark as kept by an app): answered from this loop once committed.
        let peer = NewUserLimiter.Client(
            peer: context.channel.remoteAddress, forwardedFor: request.headerFields[.xForwardedFor],
            trustsProxy: delivery.trustsProxy)
        let limiter = delivery.newUsers
        let handler = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        delivery.store.assignments.finish(
            read, for: client, admittingNewUser: { limiter.admit(peer) },
            completion: { result in
                let reply = result.map { $0.map(answer) }
                handler.eventLoop.execute {
                    let (handler, context) = handler.value
                    handler.finishAwaiting(with: (try? reply.get()) ?? nil, context: context)
                }
            })
        return .awaiting(request, hasEnded: false)
    }

    /// Sends the awaited answer, or without one (the store failed, or a revision overtook the
    /// read) hands the request to the router as read so far; then reads what was held.
    private func finishAwaiting(with answer: Answer?, context: ChannelHandlerContext) {
        guard case .awaiting(let request, let hasEnded) = current else { return }
        current = nil
        if let answer {
            if hasEnded { send(answer, context: context) } else { current = .answered(answer) }
        } else {
            routed += 1
            context.fireChannelRead(wrapInboundOut(.head(request)))
            if hasEnded { context.fireChannelRead(wrapInboundOut(.end(nil))) }
        }
        let parts = held
        held = []
        for part in parts { read(part, context: context) }
    }

    private func send(_ answer: Answer, context: ChannelHandlerContext) {
        var head = answer.head
        head.headerFields[.date] = HTTPDate.now
        head.headerFields[.server] = "flagpole"
        head.headerFields[.contentLength] = String(answer.body?.readableBytes ?? 0)
        delivery.metrics.fastPathRequests[currentRoute]?[head.status.code]?.increment()
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        if let body = answer.body { context.write(wrapOutboundOut(.body(body)), promise: nil) }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }

    // MARK: Evaluations

    /// An OFREP evaluation of a public environment without a key, a query or an `Origin` (CORS
    /// is the router's), or a Bucketeer poll of a public environment (which reads no key), whose
    /// body is small enough: collected here, then answered when the user has their groups on
    /// record.
    private func evaluationRequest(_ request: HTTPRequest) -> Current? {
        guard request.headerFields[.connection].map({ $0.lowercased() == "keep-alive" }) ?? true,
            let length = request.headerFields[.contentLength].flatMap(Int.init), length <= Self.maxBodySize,
            let path = request.path
        else { return nil }
        let evaluation: Evaluation
        if let target = OFREPTarget(path) {
            guard DeliveryCredential(request.headerFields) == .none, request.headerFields[.origin] == nil else {
                return nil
            }
            evaluation = .ofrep(target)
            currentRoute = target.key == nil ? .ofrepBulk : .ofrepSingle
        } else if let (environment, call) = Self.environmentRoute(path), call == "get_evaluations" {
            evaluation = .bucketeer(environment)
            currentRoute = .bucketeerEvaluations
        } else {
            return nil
        }
        guard let (state, _) = delivery.cache.currentDocument(evaluation.path), !state.settings.isPrivate else {
            return nil
        }
        return .collecting(request, evaluation, body: ByteBuffer())
    }

    /// The answer when one read of the store gives it (the router's, byte for byte); `nil` for
    /// anything else (a bad body, no user, a group to record first): the router answers.
    private func evaluationAnswer(_ request: HTTPRequest, _ evaluation: Evaluation, body: ByteBuffer) -> Answer? {
        let bytes = Array(body.readableBytesView)
        switch evaluation {
        case .ofrep(let target):
            guard
                let evaluation = try? OFREPRequest(
                    bytes, key: target.key, attributeLimits: delivery.attributeLimits),
                let user = evaluation.context.user,
                let read = try? delivery.store.assignments.readUserDocumentNow(
                    for: user, in: target.path, attributes: evaluation.context.attributes)
            else { return nil }
            if let key = target.key {
                guard case .success(let flag)? = read.flag(key, for: evaluation.context) else { return nil }
                delivery.fetches.count(target.path, revision: read.revision, .ofrep)
                return OFREPRoutes.answer(flag)
            }
            guard let flags = read.flags(for: evaluation.context, tagged: nil) else { return nil }
            delivery.fetches.count(target.path, revision: read.revision, .ofrep)
            return OFREPRoutes.bulkAnswer(
                flags, changesURI: OFREPRoutes.changesURI(of: target.path), request: evaluation, tag: nil,
                ifNoneMatch: request.headerFields[.ifNoneMatch])
        case .bucketeer(let path):
            guard
                let poll = try? BucketeerEvaluationsRequest(bytes, attributeLimits: delivery.attributeLimits),
                poll.attributes.isKept,
                let read = try? delivery.store.assignments.readUserDocumentNow(
                    for: poll.user, in: path, attributes: poll.context.attributes),
                let flags = read.flags(for: poll.context, tagged: poll.tag.isEmpty ? nil : poll.tag)
            else { return nil }
            delivery.fetches.count(path, revision: read.revision, .bucketeer)
            return BucketeerRoutes.answer(BucketeerEvaluationsAnswer.answer(flags, for: poll, isRecorded: true))
        }
    }

    /// Passes a request read so far to the router, as if it had never stopped here.
    private func handOver(_ request: HTTPRequest, body: ByteBuffer, ended: Bool, context: ChannelHandlerContext) {
        routed += 1
        context.fireChannelRead(wrapInboundOut(.head(request)))
        if body.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(.body(body))) }
        if ended { context.fireChannelRead(wrapInboundOut(.end(nil))) }
    }

    /// The environment and document of `/t/{tenant}/{env}/features.json` or `…/configs.json`
    /// exactly (no query), else `nil`.
    static func delivered(_ path: String) -> (EnvironmentPath, DeliveredDocument)? {
        guard let (environment, file) = environmentRoute(path), let kind = DeliveredDocument(rawValue: file) else {
            return nil
        }
        return (environment, kind)
    }

    /// The environment and last segment of `/t/{tenant}/{env}/{last}` exactly, else `nil`.
    static func environmentRoute(_ path: String) -> (EnvironmentPath, String)? {
        let parts = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0].isEmpty, parts[1].elementsEqual("t".utf8),
            let last = String(parts[4]), let tenant = String(parts[2]), let environment = String(parts[3])
        else { return nil }
        return (
            EnvironmentPath(tenant: TenantSlug(rawValue: tenant), environment: EnvironmentName(rawValue: environment)),
            last
        )
    }

    /// The routes answered here, as the router's request metrics name them.
    enum Route: String, CaseIterable {
        case features = "/t/{tenant}/{env}/features.json"
        case configs = "/t/{tenant}/{env}/configs.json"
        case ofrepSingle = "/t/{tenant}/{env}/ofrep/v1/evaluate/flags/{key}"
        case ofrepBulk = "/t/{tenant}/{env}/ofrep/v1/evaluate/flags"
        case bucketeerEvaluations = "/t/{tenant}/{env}/get_evaluations"
    }
}

/// The `Date` header's value, formatted once a second rather than once a response.
enum HTTPDate {
    private static let cached = Mutex<(second: Int, text: String)>((0, ""))

    static var now: String {
        let second = Int(Date().timeIntervalSince1970)
        return cached.withLock { cached in
            if cached.second != second {
                cached = (
                    second,
                    Date(timeIntervalSince1970: Double(second)).formatted(
                        Date.VerbatimFormatStyle(
                            format:
                                "\(weekday: .abbreviated), \(day: .twoDigits) \(month: .abbreviated) \(year: .defaultDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits) GMT",
                            locale: Locale(identifier: "en_US_POSIX"), timeZone: TimeZone(identifier: "GMT")!,
                            calendar: Calendar(identifier: .gregorian)))
                )
            }
            return cached.text
        }
    }
}
