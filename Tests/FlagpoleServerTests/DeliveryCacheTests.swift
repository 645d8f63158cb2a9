import FlagpoleCore
import FlagpoleStore
import Testing

@testable import FlagpoleServer

@Suite("The delivery cache")
struct DeliveryCacheTests {
    let path = EnvironmentPath(tenant: TenantSlug(rawValue: "acme"), environment: .production)

    func state(revision: Int?, isPrivate: Bool = false, version: Int = 0, generation: Int64 = 0) -> DeliveryState {
        DeliveryState(
            revision: revision, settings: DeliverySettings(isPrivate: isPrivate), settingsVersion: version,
            generation: generation)
    }

    @Test("A reading that finishes late never takes delivery back to an older revision or older settings")
    func readingsOnlyMoveForward() {
        let cache = DeliveryCache()
        cache.setCurrent(state(revision: 3, isPrivate: true, version: 2), of: path)
        cache.setCurrent(state(revision: 2, isPrivate: true, version: 2), of: path)
        cache.setCurrent([path: state(revision: 3, isPrivate: false, version: 1)])
        #expect(cache.current(path) == state(revision: 3, isPrivate: true, version: 2))
        cache.setCurrent([path: state(revision: 4, isPrivate: true, version: 2)])
        #expect(cache.current(path)?.revision == 4)
        cache.setCurrent(state(revision: 4, isPrivate: false, version: 3), of: path)
        #expect(cache.current(path)?.settings.isPrivate == false)
    }

    @Test("Past revisions beyond the limit are evicted, oldest first; current documents stay")
    func eviction() {
        let cache = DeliveryCache(pastRevisionLimit: 3)
        cache.setCurrent(state(revision: 10), of: path)
        for revision in 1...10 {
            cache.insert(
                RenderedDocument(revision: revision, bytes: Array("{\"r\": \(revision)}".utf8)),
                for: .init(path: path, revision: revision), generation: 0)
        }
        let kept = (1...10).filter { cache.document(.init(path: path, revision: $0)) != nil }
        #expect(kept == [7, 8, 9, 10])
    }

    @Test(
        "A restore (a later generation) drops every document held and may take delivery back to an older revision; an older generation is ignored"
    )
    func restoreStartsOver() {
        let cache = DeliveryCache()
        let other = EnvironmentPath(tenant: TenantSlug(rawValue: "globex"), environment: .production)
        cache.setCurrent([path: state(revision: 5), other: state(revision: 2)])
        let key = DeliveryCache.Key(path: path, revision: 5)
        cache.insert(RenderedDocument(revision: 5, bytes: Array("{}".utf8)), for: key, generation: 0)
        #expect(cache.document(key) != nil)

        cache.setCurrent(state(revision: 3, generation: 1), of: path)
        #expect(cache.current(path)?.revision == 3)
        #expect(cache.document(key) == nil)
        #expect(cache.current(other) == nil, "what the restore may have changed elsewhere is read again")
        // A document read before the restore is not kept, nor is a reading of the old generation.
        cache.insert(RenderedDocument(revision: 5, bytes: Array("{}".utf8)), for: key, generation: 0)
        #expect(cache.document(key) == nil)
        cache.setCurrent(state(revision: 9, generation: 0), of: path)
        #expect(cache.current(path)?.revision == 3)
    }
}

/// What a server delivers follows each write of its store, whoever makes it: no handler refreshes
/// delivery by hand, and a write returns only once the server serves it.
@Suite("Delivery follows the store's writes")
struct DeliveryFollowsWritesTests {
    @Test(
        "A store write outside any handler (a config, a bias, privacy) is served at the next request, without a poll")
    func writesAreServedAtOnce() async throws {
        let server = try await TestServer()
        try await server.test { client in
            let before = try await client.send(.get, "/t/acme/production/configs.json")
            #expect(before.status == .ok && !before.text.contains("announced"))
            // The store itself, as a handler, the command line's twin, or a future protocol writes.
            _ = try await server.store.catalog.setConfig(
                Config(name: "announced", type: .int, defaultValue: .int(1)), in: TestServer.acme,
                options: EditOptions(actor: "test"))
            let after = try await client.send(.get, "/t/acme/production/configs.json")
            #expect(after.text.contains(#""announced": 1"#), "\(after.text)")
            #expect(after.headers[.revision] != before.headers[.revision])

            _ = try await server.store.catalog.setBiases(
                [10, 90], of: TestServer.abTest, in: TestServer.acme, options: EditOptions(actor: "test"))
            let features = try await client.send(.get, "/t/acme/production/features.json")
            #expect(features.text.contains("[10, 90]") && features.headers[.revision] == "3", "\(features.headers)")

            try await server.store.access.updateDelivery(of: TestServer.acme) { $0.isPrivate = true }
            #expect(try await client.send(.get, "/t/acme/production/features.json").status == .unauthorized)
        }
    }
}
