import FlagpoleStore
import Foundation
import NIOPosix
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which addresses a webhook may reach: not loopback, private, link-local or otherwise internal
/// ones, unless the server's operator allows them (`serve --allow-private-webhooks`), so that
/// an editor cannot make the server call the inside of its network. Checked when a webhook is
/// made, and again on every delivery, on the address the delivery then connects to (after DNS:
/// a name may resolve elsewhere since).
public struct WebhookAddresses: Sendable {
    public var allowsPrivate: Bool
    /// The host's addresses, as text (`getaddrinfo` unless a test says otherwise).
    var resolve: @Sendable (String) async throws -> [String]
    /// How long a host may take to resolve: a DNS server that does not answer must not hold a
    /// request (or a delivery) for the resolver's own timeouts and retries.
    var resolveTimeout: Duration

    public init(allowsPrivate: Bool) {
        self.init(allowsPrivate: allowsPrivate, resolve: Self.systemResolve)
    }

    init(
        allowsPrivate: Bool, resolveTimeout: Duration = .seconds(5),
        resolve: @escaping @Sendable (String) async throws -> [String]
    ) {
        self.allowsPrivate = allowsPrivate
        self.resolveTimeout = resolveTimeout
        self.resolve = resolve
    }

    /// The address to connect to for `url`: its host's first address, when every one of them may
    /// be reached (a name with one internal address among public ones is refused too).
    ///
    /// - throws: `WebhookError.unresolvable`, `WebhookError.privateAddress`.
    public func vet(_ url: WebhookURL) async throws -> String {
        let addresses = await addresses(of: url.host)
        guard let first = addresses.first else { throw WebhookError.unresolvable(host: url.host) }
        if !allowsPrivate, let inside = addresses.first(where: Self.isInternal) {
            throw WebhookError.privateAddress(host: url.host, address: inside)
        }
        return first
    }

    /// The host's addresses, or none when it does not resolve within `resolveTimeout` (the lookup
    /// itself cannot be stopped; it finishes on its thread, unheard).
    private func addresses(of host: String) async -> [String] {
        let (resolve, timeout) = (resolve, resolveTimeout)
        return await withCheckedContinuation { continuation in
            let answer = FirstAnswer(continuation)
            Task { answer.give((try? await resolve(host)) ?? []) }
            Task {
                try? await Task.sleep(for: timeout)
                answer.give([])
            }
        }
    }

    /// Resumes its continuation with the first answer given, once.
    private final class FirstAnswer: Sendable {
        private let continuation: Mutex<CheckedContinuation<[String], Never>?>

        init(_ continuation: CheckedContinuation<[String], Never>) {
            self.continuation = Mutex(continuation)
        }

        func give(_ addresses: [String]) {
            continuation.withLock { $0.take() }?.resume(returning: addresses)
        }
    }

    /// Whether `address` (IPv4 or IPv6 text) is one a server must not call for an editor:
    /// unspecified, loopback, private (RFC 1918, IPv6 unique local), shared (100.64/10),
    /// link-local, benchmarking, multicast or reserved; IPv4-mapped and NAT64 IPv6 addresses by
    /// the IPv4 address inside. Text that is no address counts as internal.
    public static func isInternal(_ address: String) -> Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 {
            return isInternal(v4: withUnsafeBytes(of: v4.s_addr) { Array($0) })
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, address, &v6) == 1 else { return true }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        // ::ffff:a.b.c.d (mapped) and 64:ff9b::a.b.c.d (NAT64) reach an IPv4 address.
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff
            || bytes[0..<12].elementsEqual([0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0])
        {
            return isInternal(v4: Array(bytes[12..<16]))
        }
        if bytes[0..<15].allSatisfy({ $0 == 0 }) { return true }  // :: and ::1
        if bytes[0] & 0xfe == 0xfc { return true }  // fc00::/7, unique local
        if bytes[0] == 0xfe && bytes[1] & 0xc0 == 0x80 { return true }  // fe80::/10, link-local
        if bytes[0] == 0xfe && bytes[1] & 0xc0 == 0xc0 { return true }  // fec0::/10, site-local (deprecated)
        if bytes[0] == 0xff { return true }  // multicast
        return false
    }

    private static func isInternal(v4 bytes: [UInt8]) -> Bool {
        let (a, b) = (bytes[0], bytes[1])
        return a == 0 || a == 10 || a == 127  // this network, private, loopback
            || (a == 100 && b & 0xc0 == 64)  // 100.64/10, shared (carrier-grade NAT)
            || (a == 169 && b == 254)  // link-local, cloud metadata
            || (a == 172 && b & 0xf0 == 16)  // 172.16/12
            || (a == 192 && b == 168)  // 192.168/16
            || (a == 192 && b == 0 && bytes[2] == 0)  // 192.0.0/24, protocol assignments
            || (a == 198 && b & 0xfe == 18)  // 198.18/15, benchmarking
            || a >= 224  // multicast, reserved, broadcast
    }

    /// `getaddrinfo`, off the caller's thread: it blocks.
    @Sendable static func systemResolve(_ host: String) async throws -> [String] {
        try await NIOThreadPool.singleton.runIfActive {
            var hints = addrinfo()
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            var list: UnsafeMutablePointer<addrinfo>?
            guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
            defer { freeaddrinfo(first) }
            var addresses: [String] = []
            var next: UnsafeMutablePointer<addrinfo>? = first
            while let entry = next {
                var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
                if getnameinfo(
                    entry.pointee.ai_addr, entry.pointee.ai_addrlen, &text, socklen_t(text.count), nil, 0,
                    NI_NUMERICHOST) == 0
                {
                    let address = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    if !addresses.contains(address) { addresses.append(address) }
                }
                next = entry.pointee.ai_next
            }
            return addresses
        }
    }
}
