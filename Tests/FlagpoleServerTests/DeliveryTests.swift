import CompressNIO
import FlagpoleCore
import FlagpolePublish
import FlagpoleStore
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import FlagpoleServer

@Suite("Delivery: GET /t/{tenant}/{env}/features.json")
struct DeliveryTests {
    static let url = "/t/acme/production/features.json"

    @Test("The document is export's bytes, with a strong ETag, the default Cache-Control and Vary")
    func servesExportBytes() async throws {
        let server = try await TestServer()
        let exported = try await server.store.catalog.revision(of: TestServer.acme).document
        try await server.test { client in
            let response = try await client.send(.get, Self.url)
            #expect(response.status == .ok)
            #expect(response.bytes == exported)
            #expect(response.headers[.contentType] == "application/json")
            #expect(response.headers[.cacheControl] == ServerConfiguration.standardCacheControl)
            #expect(response.headers[.vary] == "Accept-Encoding")
            #expect(response.headers[.contentEncoding] == nil)
            let etag = try #require(response.headers[.eTag])
            #expect(
                etag == "\"\(DeliveryArtifact(bytes: exported).sha256.prefix(32))\"",
                "a strong ETag: the quoted hash, no W/")
        }
    }

    @Test("A matching If-None-Match answers 304 with no body; a stale one gets the document")
    func notModified() async throws {
        let server = try await TestServer()
        try await server.test { client in
            let etag = try #require(try await client.send(.get, Self.url).headers[.eTag])
            for tags in [etag, "\"other\", \(etag)", "W/\(etag)", "*"] {
                let response = try await client.send(.get, Self.url, headers: [.ifNoneMatch: tags])
                #expect(response.status == .notModified, "If-None-Match: \(tags)")
                #expect(response.body.readableBytes == 0)
                #expect(response.headers[.eTag] == etag)
                #expect(response.headers[.cacheControl] == ServerConfiguration.standardCacheControl)
            }
            let stale = try await client.send(.get, Self.url, headers: [.ifNoneMatch: "\"0123\""])
            #expect(stale.status == .ok)
            #expect(stale.body.readableBytes > 0)
        }
    }

    @Test(
        "gzip when accepted, with its own ETag, decompressing to the same bytes; not when q=0",
        arguments: [
            ("gzip", true), ("gzip, deflate, br", true), ("br;q=1.0, gzip;q=0.8", true), ("*", true),
            ("identity", false), ("gzip;q=0", false), ("deflate", false),
        ])
    func gzip(acceptEncoding: String, isGzipped: Bool) async throws {
        let server = try await TestServer()
        let exported = try await server.store.catalog.revision(of: TestServer.acme).document
        try await server.test { client in
            let plain = try await client.send(.get, Self.url)
            let response = try await client.send(.get, Self.url, headers: [.acceptEncoding: acceptEncoding])
            #expect(response.status == .ok)
            #expect((response.headers[.contentEncoding] == "gzip") == isGzipped)
            if isGzipped {
                var body = response.body
                let inflated = try body.decompress(with: .gzip())
                #expect(Array(inflated.readableBytesView) == exported)
                #expect(response.headers[.eTag] != plain.headers[.eTag], "each encoding has its own strong ETag")
                // Either tag names the revision: a client switching encodings still gets 304.
                let conditional = try await client.send(
                    .get, Self.url, headers: [.acceptEncoding: acceptEncoding, .ifNoneMatch: plain.headers[.eTag]!])
                #expect(conditional.status == .notModified)
            } else {
                #expect(response.bytes == exported)
            }
        }
    }

    @Test(
        "?revision=N serves a past revision, immutable only when the URL names its bytes (&sha256=); an API import is served at once"
    )
    func pastRevisionsAndInvalidation() async throws {
        let server = try await TestServer()
        let first = try await server.store.catalog.revision(of: TestServer.acme).document
        try await server.test { client in
            _ = try await client.send(.get, Self.url)  // cached now
            let next = String(decoding: try TestServer.fixture("rwbutler-99b0686-Features.json"), as: UTF8.self)
            let imported = try await client.send(
                .post, "/api/v1/tenants/acme/environments/production/import", key: server.key("acme", .editor),
                body: next)
            #expect(imported.status == .ok)
            #expect(try imported.json["revision"]?.number == 2)

            let current = try await client.send(.get, Self.url)
            #expect(current.headers[.revision] == "2")
            #expect(current.bytes == (try await server.store.catalog.revision(of: TestServer.acme).document))
            let past = try await client.send(.get, Self.url + "?revision=1")
            #expect(past.bytes == first)
            // A restore could put other bytes under the number: only a URL with the hash is immutable.
            #expect(past.headers[.cacheControl] == ServerConfiguration.standardCacheControl)
            let sha256 = DeliveryArtifact(bytes: first).sha256
            #expect(past.headers[.contentLocation] == Self.url + "?revision=1&sha256=" + sha256)
            let pinned = try await client.send(.get, Self.url + "?revision=1&sha256=" + sha256)
            #expect(pinned.bytes == first)
            #expect(pinned.headers[.cacheControl] == CacheControl.immutable)
            // The ETag's 32 digits name it too; other digits name no document; too few are malformed.
            let etag = String(sha256.prefix(32))
            #expect(try await client.send(.get, Self.url + "?revision=1&sha256=" + etag.uppercased()).status == .ok)
            let other = try await client.send(.get, Self.url + "?revision=2&sha256=" + etag)
            #expect(other.status == .notFound)
            #expect(other.text.contains("restored"))
            #expect(try await client.send(.get, Self.url + "?revision=1&sha256=abc").status == .badRequest)
            #expect(try await client.send(.get, Self.url + "?sha256=" + etag).status == .unprocessableContent)
            #expect(try await client.send(.get, Self.url + "?revision=9").status == .notFound)
            #expect(try await client.send(.get, Self.url + "?revision=x").status == .unprocessableContent)
        }
    }

    @Test("?user= serves the pinned document, privately, and records the user's group")
    func pinnedDocument() async throws {
        let server = try await TestServer()
        try await server.test { client in
            let response = try await client.send(.get, Self.url + "?user=device-42")
            #expect(response.status == .ok)
            #expect(response.headers[.cacheControl] == "private, no-store")
            let pinned = try await server.store.assignments.pinnedDocument(
                for: UserID(rawValue: "device-42"), in: TestServer.acme)
            #expect(response.bytes == pinned.bytes)
            #expect(response.text.contains("test-variation-assignment"))
            let events = try await server.store.assignments.assignmentEvents(
                in: TestServer.acme, matching: AssignmentEventQuery(user: UserID(rawValue: "device-42")))
            #expect(!events.isEmpty, "the first fetch records the user's groups")
            #expect(events.allSatisfy { $0.reason == .first })
            #expect(response.headers[.recorded] == "true")
            // An id the store could not hold is a bad request, saying which rule it breaks.
            for (id, reason) in [
                ("", "empty"), (String(repeating: "x", count: 257), "longer than 256 bytes"),
                ("a%0Ab", "control character"),
            ] {
                let invalid = try await client.send(.get, Self.url + "?user=" + id)
                #expect(invalid.status == .badRequest)
                #expect(invalid.text.contains(reason), "\(invalid.text)")
            }
            #expect(try await client.send(.get, Self.url + "?user=" + String(repeating: "x", count: 256)).status == .ok)
            #expect(
                try await client.send(.get, Self.url + "?user=device-42&revision=1").status == .unprocessableContent)
        }
    }

    @Test("A private environment needs a key of its tenant: none is 401, another tenant's is 404")
    func privateEnvironment() async throws {
        let server = try await TestServer()
        try await server.test { client in
            let patched = try await client.send(
                .patch, "/api/v1/tenants/acme/environments/production", key: server.key("acme", .admin),
                body: #"{"private": true, "cacheControl": "private, max-age=5"}"#)
            #expect(patched.status == .ok)
            #expect(try patched.json["private"] == .bool(true))

            let anonymous = try await client.send(.get, Self.url)
            #expect(anonymous.status == .unauthorized)
            #expect(anonymous.headers[.wwwAuthenticate] == "Bearer")
            #expect(!anonymous.text.contains("Example"))
            let foreign = try await client.send(.get, Self.url, key: server.key("globex", .admin))
            #expect(foreign.status == .notFound)
            let unknown = try await client.send(.get, "/t/acme/nope/features.json", key: server.key("globex", .admin))
            #expect(foreign.errorCode == unknown.errorCode)
            #expect(
                try foreign.json["error"]?["message"]?.string?.replacingOccurrences(of: "production", with: "nope")
                    == unknown.json["error"]?["message"]?.string, "another tenant's private environment looks like none"
            )
            let revoked = try await server.store.access.createKey(
                for: .tenant(TenantSlug(rawValue: "acme")), role: .delivery)
            try await server.store.access.revokeKey(revoked.info.prefix, of: .tenant(TenantSlug(rawValue: "acme")))
            #expect(try await client.send(.get, Self.url, key: revoked.secret).status == .unauthorized)

            let delivered = try await client.send(.get, Self.url, key: server.key("acme", .delivery))
            #expect(delivered.status == .ok)
            #expect(delivered.headers[.cacheControl] == "private, max-age=5")
            _ = try await client.send(
                .post, "/api/v1/tenants/acme/environments/production/features/\(segment(TestServer.abTest))/disable",
                key: server.key("acme", .editor))
            let first = try await server.store.catalog.revision(1, of: TestServer.acme).document
            let past = try await client.send(
                .get, Self.url + "?revision=1&sha256=" + DeliveryArtifact(bytes: first).sha256,
                key: server.key("acme", .delivery))
            #expect(
                past.headers[.cacheControl] == "private, max-age=31536000, immutable",
                "no shared cache keeps a private document")
            // Nor may a setting make it public, in either order.
            let admin = server.key("acme", .admin)
            let publicOnPrivate = try await client.send(
                .patch, "/api/v1/tenants/acme/environments/production", key: admin,
                body: #"{"cacheControl": "public, max-age=600"}"#)
            #expect(publicOnPrivate.status == .unprocessableContent)
            _ = try await client.send(
                .patch, "/api/v1/tenants/acme/environments/production", key: admin,
                body: #"{"private": false, "cacheControl": "public, s-maxage=60"}"#)
            let privateWithPublic = try await client.send(
                .patch, "/api/v1/tenants/acme/environments/production", key: admin, body: #"{"private": true}"#)
            #expect(privateWithPublic.status == .unprocessableContent)
            #expect(
                try await client.send(.get, Self.url).headers[.cacheControl] == "public, s-maxage=60",
                "a refused change changes nothing")
        }
    }

    @Test("Unknown tenants and environments are 404 without naming the tenant's environments")
    func unknownPaths() async throws {
        let server = try await TestServer()
        try await server.store.access.createEnvironment(
            EnvironmentPath(
                tenant: TenantSlug(rawValue: "acme"), environment: EnvironmentName(rawValue: "secret-staging")))
        try await server.test { client in
            for uri in [
                "/t/nobody/production/features.json", "/t/acme/nope/features.json", "/t/ACME/production/features.json",
                "/t/acme/production/other.json",
            ] {
                let response = try await client.send(.get, uri)
                #expect(response.status == .notFound, "\(uri)")
                #expect(response.errorCode == "not_found")
                #expect(!response.text.contains("secret-staging"))
            }
            // An environment with no revision yet.
            let empty = try await client.send(.get, "/t/acme/secret-staging/features.json")
            #expect(empty.status == .notFound)
            #expect(empty.errorCode == "no_revision")
        }
    }

    @Test("HEAD answers the headers of GET")
    func head() async throws {
        let server = try await TestServer()
        try await server.test { client in
            let get = try await client.send(.get, Self.url)
            let head = try await client.send(.head, Self.url)
            #expect(head.status == .ok)
            #expect(head.headers[.eTag] == get.headers[.eTag])
        }
    }
}
