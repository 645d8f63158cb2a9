import Foundation
import NIOCore
import Synchronization

/// How many users new to the store each client may have recorded through public delivery: a
/// token bucket per client address (per /64 for IPv6, the block one subscriber gets).
///
/// A public environment lets anyone create rows by asking for `?user=` with made-up ids. Real
/// first launches behind one carrier NAT address come a few a second at most, so a bucket of
/// `burst` users refilled at `rate` a second leaves them alone and bounds what one address can
/// write. Users already recorded are never counted.
public final class NewUserLimiter: Sendable {
    /// The limit: `rate` new users a second on average, `burst` at once.
    public struct Limit: Hashable, Sendable {
        public var rate: Double
        public var burst: Int

        /// Ten new users a second per address, a hundred at once.
        public static let standard = Limit(rate: 10, burst: 100)

        /// When a refused client may try again, in whole seconds: the time one token takes, and
        /// a minute when none ever comes (`rate` 0, which the tests and a closed server use).
        public var retryAfterSeconds: Int {
            rate > 0 ? Int(min(3600, max(1, (1 / rate).rounded(.up)))) : 60
        }
    }

    /// A client: an IPv4 address, an IPv6 /64, or the one key of every Unix-socket peer.
    struct Client: Hashable, Sendable {
        let bytes: [UInt8]

        /// The client of a connection's peer address.
        init(_ address: SocketAddress?) {
            switch address {
            case .v4(let address):
                bytes = withUnsafeBytes(of: address.address.sin_addr) { Array($0) }
            case .v6(let address):
                let all = withUnsafeBytes(of: address.address.sin6_addr) { Array($0) }
                // An IPv4 address mapped into IPv6 (::ffff:a.b.c.d) is that IPv4 client.
                let isMapped = all[0..<10].allSatisfy { $0 == 0 } && all[10] == 0xff && all[11] == 0xff
                bytes = isMapped ? Array(all[12...]) : Array(all[..<8])
            case .unixDomainSocket, nil:
                bytes = []
            }
        }

        /// The client of a request from `peer`: with `trustsProxy`, the address the proxy names
        /// in `X-Forwarded-For` when there is one.
        init(peer: SocketAddress?, forwardedFor: String?, trustsProxy: Bool) {
            if trustsProxy, let forwardedFor, let client = Client(forwardedFor: forwardedFor) {
                self = client
            } else {
                self.init(peer)
            }
        }

        /// The client a proxy names: the last address of `X-Forwarded-For`, which the proxy in
        /// front appended (the ones before it came from the client and prove nothing). `nil`
        /// when the header holds no address.
        init?(forwardedFor header: String) {
            guard let last = header.split(separator: ",").last?.trimmingCharacters(in: .whitespaces),
                let address = try? SocketAddress(ipAddress: last, port: 0)
            else { return nil }
            self.init(address)
        }
    }

    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    let limit: Limit
    private let buckets = Mutex<[Client: Bucket]>([:])
    /// Clients tracked at most. Buckets full again are forgotten first; beyond that, new
    /// clients are refused until some fill up (a flood from many addresses records nobody more).
    let trackedClientLimit: Int

    init(limit: Limit, trackedClientLimit: Int = 100_000) {
        self.limit = limit
        self.trackedClientLimit = trackedClientLimit
    }

    /// Whether `client` may have one more new user recorded now; takes a token when it may.
    func admit(_ client: Client, now: ContinuousClock.Instant = .now) -> Bool {
        buckets.withLock { buckets in
            let burst = Double(limit.burst)
            var bucket: Bucket
            if let held = buckets[client] {
                bucket = held
                bucket.tokens = min(burst, bucket.tokens + limit.rate * Self.seconds(now - bucket.updated))
            } else {
                if buckets.count >= trackedClientLimit {
                    buckets = buckets.filter {
                        limit.rate * Self.seconds(now - $0.value.updated) + $0.value.tokens < burst
                    }
                    guard buckets.count < trackedClientLimit else { return false }
                }
                bucket = Bucket(tokens: burst, updated: now)
            }
            bucket.updated = now
            guard bucket.tokens >= 1 else {
                buckets[client] = bucket
                return false
            }
            bucket.tokens -= 1
            buckets[client] = bucket
            return true
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
