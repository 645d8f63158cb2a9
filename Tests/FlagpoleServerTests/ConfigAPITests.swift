import FlagpoleCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import FlagpoleServer
@testable import FlagpoleStore

/// The admin API's configs, for what SwiftFeatureConfigs apps can take: refusals, `force`, a
/// double's decimal point, and the warnings of what an earlier version stored.
@Suite("Configs over the API, for SwiftFeatureConfigs apps")
struct ConfigAPITests {
    static let configs = "/api/v1/tenants/acme/environments/production/configs"

    @Test("A null in a json config is 422 with its pointer and writes nothing; a control character too")
    func refusals() async throws {
        let server = try await TestServer()
        try await server.test { client in
            let editor = server.key("acme", .editor)
            let null = try await client.send(
                .put, "\(Self.configs)/theme", key: editor, body: #"{"type": "json", "default": {"a": [1, null]}}"#)
            #expect(null.status == .unprocessableContent)
            #expect(null.errorCode == "invalid_config")
            #expect(null.text.contains(#""pointer":"/default/a/1""#), "\(null.text)")
            let bell = try await client.send(
                .put, "\(Self.configs)/title", key: editor, body: #"{"type": "string", "default": "ding\u0007"}"#)
            #expect(bell.status == .unprocessableContent && bell.text.contains("U+0007"))
            let file = try await client.send(
                .put, Self.configs, key: editor,
                body: #"{"configs": [{"name": "t", "type": "json", "default": {"x": null}}]}"#)
            #expect(file.status == .unprocessableContent && file.text.contains(#""pointer":"/configs/0/default/x""#))
        }
        #expect(try await server.store.catalog.configs(in: TestServer.acme).revision == 1)
    }

    @Test("GET writes a double's 2.0 as 2.0, in the list and alone")
    func doublesKeepTheirPoint() async throws {
        let server = try await TestServer()
        try await server.test { client in
            let put = try await client.send(
                .put, "\(Self.configs)/ratio", key: server.key("acme", .editor),
                body: #"{"type": "double", "default": 2}"#)
            #expect(put.status == .ok)
            let reader = server.key("acme", .reader)
            let list = try await client.send(.get, Self.configs, key: reader)
            #expect(list.text.contains(#""default": 2.0"#) && list.text.contains(#""revision": 2"#), "\(list.text)")
            #expect(try list.json["revision"]?.number == 2)
            let one = try await client.send(.get, "\(Self.configs)/ratio", key: reader)
            #expect(one.text.contains(#""default": 2.0"#), "\(one.text)")
        }
    }

    @Test("configs.json?release= serves what that release declares, shared and per user; an unknown release is 404")
    func releases() async throws {
        let server = try await TestServer()
        let declarations = try ConfigDeclarations.decode(
            Array(
                #"{"configCollectionName": "App", "features": [{"type": "Int", "name": "cells", "default": "12"}, {"type": "Bool", "name": "shown", "key": "shownKey", "default": "true"}]}"#
                    .utf8))
        let snapshot = try await server.store.catalog.configs(in: TestServer.acme)
        _ = try await server.store.catalog.importDeclarations(
            DeclarationsMerge(
                declarations.configs, into: snapshot.document, release: "5.2",
                leavingOut: declarations.keysWithoutGetters),
            in: TestServer.acme, options: EditOptions(actor: "test"))
        _ = try await server.store.catalog.setConfig(
            Config(name: "later", type: .int, defaultValue: .int(1)), in: TestServer.acme,
            options: EditOptions(actor: "test"))
        try await server.test { client in
            for url in [
                "/t/acme/production/configs.json?release=5.2", "/t/acme/production/configs.json?user=u1&release=5.2",
            ] {
                let answer = try await client.send(.get, url)
                #expect(answer.status == .ok)
                #expect(try answer.json == ["cells": .number(12)], "\(url): \(answer.text)")
            }
            let all = try await client.send(.get, "/t/acme/production/configs.json").json
            #expect(all["later"] != nil && all["shownKey"] != nil)
            let unknown = try await client.send(.get, "/t/acme/production/configs.json?user=u2&release=4.0")
            #expect(unknown.status == .notFound && unknown.text.contains("--release 4.0"), "\(unknown.text)")
        }
    }

    @Test("A declared type refuses a retype with 422 unless the body says \"force\": true")
    func force() async throws {
        let server = try await TestServer()
        let declarations = try ConfigDeclarations.decode(
            Array(
                #"{"configCollectionName": "App", "features": [{"type": "Int", "name": "cells", "default": "12"}]}"#
                    .utf8))
        let snapshot = try await server.store.catalog.configs(in: TestServer.acme)
        _ = try await server.store.catalog.importDeclarations(
            DeclarationsMerge(declarations.configs, into: snapshot.document), in: TestServer.acme,
            options: EditOptions(actor: "test"))
        try await server.test { client in
            let editor = server.key("acme", .editor)
            let refused = try await client.send(
                .put, "\(Self.configs)/cells", key: editor, body: #"{"type": "string", "default": "15"}"#)
            #expect(refused.status == .unprocessableContent)
            #expect(refused.text.contains("as? Int") && refused.text.contains(#""pointer":"/type""#), "\(refused.text)")
            let forced = try await client.send(
                .put, "\(Self.configs)/cells", key: editor, body: #"{"type": "string", "default": "15", "force": true}"#
            )
            #expect(forced.status == .ok, "\(forced.text)")
            let shown = try await client.send(.get, "\(Self.configs)/cells", key: editor)
            #expect(shown.text.contains(#""declared": {"type": "Int", "default": 12}"#), "\(shown.text)")
            let notBool = try await client.send(
                .put, "\(Self.configs)/cells", key: editor, body: #"{"type": "int", "default": 1, "force": "yes"}"#)
            #expect(notBool.status == .unprocessableContent || notBool.status == .badRequest)
        }
    }

    @Test("Configs an earlier version stored with a null: GET lists warnings, configs.json serves them without it")
    func storedNullWarnings() async throws {
        let server = try await TestServer()
        _ = try await server.store.catalog.setConfig(
            Config(name: "theme", type: .json, defaultValue: .json(["a": .number(1)])), in: TestServer.acme,
            options: EditOptions(actor: "test"))
        try await server.store.write { db in
            _ = try db.execute(
                "UPDATE revisions SET configs = ? WHERE number = 2",
                [Data(#"{"configs": [{"name": "theme", "type": "json", "default": {"a": null, "b": 2}}]}"#.utf8)])
        }
        try await server.test { client in
            let list = try await client.send(.get, Self.configs, key: server.key("acme", .reader))
            #expect(list.status == .ok)
            #expect(try list.json["warnings"]?[0]?["pointer"]?.string == "/configs/0/default/a", "\(list.text)")
            let delivered = try await client.send(.get, "/t/acme/production/configs.json")
            #expect(delivered.text.contains(#""theme": {"b":2}"#), "\(delivered.text)")
        }
    }
}
