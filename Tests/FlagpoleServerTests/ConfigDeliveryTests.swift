import CompressNIO
import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import Testing

@testable import FlagpoleServer

@Suite("configs.json and the configs API")
struct ConfigDeliveryTests {
    static let url = "/t/acme/production/configs.json"
    static let api = "/api/v1/tenants/acme/environments/production"

    @Test("configs.json is the typed dictionary, with an ETag, 304, gzip and Cache-Control as features.json")
    func delivery() async throws {
        let server = try await OFREPTests.server()
        try await server.test { client in
            let response = try await client.send(.get, Self.url)
            #expect(response.status == .ok)
            #expect(
                response.text == """
                    {
                        "title": "Welcome",
                        "count": 15,
                        "ratio": 2.0,
                        "on": true,
                        "theme": {"accent":"blue"},
                        "Größentabelle": "EU"
                    }

                    """)
            #expect(response.headers[.cacheControl] == ServerConfiguration.standardCacheControl)
            let etag = try #require(response.headers[.eTag])
            #expect(try await client.send(.get, Self.url, headers: [.ifNoneMatch: etag]).status == .notModified)
            let gzipped = try await client.send(.get, Self.url, headers: [.acceptEncoding: "gzip"])
            #expect(gzipped.headers[.contentEncoding] == "gzip")
            var body = gzipped.body
            #expect(try body.decompress(with: .gzip()).readableBytesView.elementsEqual(response.bytes))
            #expect(try await client.send(.get, Self.url + "?tag=ios").json == ["title": .string("Welcome")])
            let user = try await client.send(.get, Self.url + "?user=user-1")
            #expect(user.headers[.cacheControl] == "private, no-store")
            #expect(user.headers[.recorded] == "true")
            #expect(try await client.send(.get, Self.url + "?revision=1").status == .unprocessableContent)
        }
    }

    @Test("A private environment's configs.json takes a key")
    func privateEnvironment() async throws {
        let server = try await OFREPTests.server()
        try await server.store.access.updateDelivery(of: TestServer.acme) { $0.isPrivate = true }
        try await server.test { client in
            let anonymous = try await client.send(.get, Self.url)
            #expect(anonymous.status == .unauthorized)
            #expect(try await client.send(.get, Self.url, key: server.key("acme", .delivery)).status == .ok)
        }
    }

    @Test("PUT, GET and DELETE a config; a value of the wrong type is a 422 with its pointer, line and column")
    func api() async throws {
        let server = try await OFREPTests.server()
        let editor = server.key("acme", .editor)
        try await server.test { client in
            let put = try await client.send(
                .put, Self.api + "/configs/limit", key: editor,
                body: #"{"type": "int", "default": 20, "message": "raise the limit"}"#)
            #expect(put.status == .ok)
            let putJSON = try put.json
            #expect(putJSON["revision"] == .number(3) && putJSON["applied"] == .bool(true))
            #expect(
                try await client.send(.get, Self.api + "/configs/limit", key: editor).json
                    == ["name": .string("limit"), "type": .string("int"), "default": .number(20)])
            let bad = try await client.send(
                .put, Self.api + "/configs/limit", key: editor, body: "{\"type\": \"int\",\n \"default\": \"20\"}")
            #expect(bad.status == .unprocessableContent)
            let badJSON = try bad.json
            let issue = badJSON["error"]?["details"]?["issues"]?[0]
            #expect(issue?["pointer"] == .string("/default"))
            #expect(issue?["line"] == .number(2) && issue?["column"] == .number(13))
            // Following a variation the feature lacks is refused too.
            let unknown = try await client.send(
                .put, Self.api + "/configs/x", key: editor,
                body: #"{"type": "bool", "default": false, "follows": "Example A/B Test", "values": {"Group Z": true}}"#
            )
            #expect(unknown.status == .unprocessableContent)
            let unknownJSON = try unknown.json
            #expect(unknownJSON["error"]?["details"]?["issues"]?[0]?["pointer"] == .string("/values/Group Z"))
            // A reader can't write; a stale If-Match is a conflict.
            #expect(
                try await client.send(
                    .put, Self.api + "/configs/y", key: server.key("acme", .reader),
                    body: #"{"type": "bool", "default": true}"#
                ).status == .forbidden)
            #expect(
                try await client.send(
                    .put, Self.api + "/configs/y", key: editor, headers: [.ifMatch: "1"],
                    body: #"{"type": "bool", "default": true}"#
                ).status == .conflict)
            let deleted = try await client.send(.delete, Self.api + "/configs/limit", key: editor)
            let deletedJSON = try deleted.json
            #expect(deletedJSON["changes"]?[0]?["config"] == .string("limit"))
            #expect(try await client.send(.get, Self.api + "/configs/limit", key: editor).status == .notFound)
            // The whole file, and a feature's tags.
            let file = try await client.send(.get, Self.api + "/configs", key: editor).json
            #expect(file["revision"] == .number(4))
            let tags = try await client.send(
                .put, Self.api + "/features/Example%20MVT%20Test/tags", key: editor, body: #"{"tags": ["ios"]}"#)
            #expect(tags.status == .ok)
            #expect(try await client.send(.get, Self.url + "?tag=ios").json == ["title": .string("Welcome")])
        }
        #expect(
            try await server.store.assignments.evaluateFlags(
                for: FlagContext(user: nil), tag: "ios", in: TestServer.acme
            ).flags
                .count == 2)
    }
}
