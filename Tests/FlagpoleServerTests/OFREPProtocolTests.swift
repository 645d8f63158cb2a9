import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

@testable import FlagpoleServer

/// OFREP on the wire as a client written from the spec sees it, on the demo's data: single and
/// bulk evaluation against what each user's pinned features.json makes of every flag on a
/// device, the refusals and their bodies, keys on the private environment and at the host
/// root, ETags and 304 per context, and `?tag=`.
@Suite("OFREP: the protocol on the wire")
struct OFREPProtocolTests {
    static let production = "/t/demo/production/ofrep/v1/evaluate/flags"
    static let staging = "/t/demo/staging/ofrep/v1/evaluate/flags"
    static let root = "/ofrep/v1/evaluate/flags"

    static func context(_ user: String? = nil, _ attributes: String = "") -> String {
        var members = user.map { [#""targetingKey": "\#($0)""#] } ?? []
        if !attributes.isEmpty { members.append(attributes) }
        return #"{"context": {\#(members.joined(separator: ", "))}}"#
    }

    /// A user's pinned features.json by feature name, and its revision.
    static func pinned(
        _ client: any TestClientProtocol, _ user: String? = nil
    ) async throws -> (document: [UInt8], entries: [String: JSONValue], revision: Int) {
        let response = try await client.send(
            .get, "/t/demo/production/features.json" + (user.map { "?user=\(segment($0))" } ?? ""))
        try #require(response.status == .ok)
        var entries: [String: JSONValue] = [:]
        for entry in try response.json["features"]?.array ?? [] { entries[entry["name"]?.string ?? ""] = entry }
        return (response.bytes, entries, Int(response.headers[.revision] ?? "") ?? -1)
    }

    /// What the contract gives `name` for a user whose pinned document is `pinned` (the shared
    /// document without a user): a device's group from the document, the kind, the label.
    static func expected(
        _ name: String, _ pinned: (document: [UInt8], entries: [String: JSONValue], revision: Int)
    ) throws -> JSONValue {
        var value = JSONValue.null
        var variant = ""
        var reason = ""
        var metadata: [(String, JSONValue)] = [("revision", .number(Double(pinned.revision)))]
        let statics: [String: JSONValue] = [
            "numberOfItemsToDisplay": .number(15), "someFeatureEnabled": .bool(true), "discountRate": .number(2),
            "theme": ["accent": .string("blue"), "cornerRadius": .number(8)],
        ]
        if let config = statics[name] {
            (value, variant, reason) = (config, "default", "STATIC")
            metadata.append(("kind", .string("config")))
        } else if name == "mainViewTitle" {
            let group = try #require(try OFREPTests.pinnedVariation(of: BucketeerAppTests.abTest, in: pinned.document))
            (value, variant, reason) = (.string(group == "Group A" ? "Welcome" : "Hello"), group, "SPLIT")
            metadata.append(("kind", .string("config")))
        } else {
            let entry = try #require(pinned.entries[name], "\(name) in the pinned document")
            let kind = try #require(DemoServer.featureKinds[name])
            metadata.append(("kind", .string(kind)))
            switch kind {
            case "flag":
                let enabled = entry["enabled"] == .bool(true)
                (value, variant, reason) = (
                    .bool(enabled), enabled ? "Enabled" : "Disabled", enabled ? "STATIC" : "DISABLED"
                )
            case "development-flag":
                (value, variant, reason) = (.bool(false), "Disabled", "DISABLED")
            case "unlock-flag":
                let unlocked = entry["unlocked"] == .bool(true)
                (value, variant, reason) =
                    unlocked ? (.bool(true), "Unlocked", "TARGETING_MATCH") : (.bool(false), "Locked", "STATIC")
            default:
                variant = try #require(try OFREPTests.pinnedVariation(of: name, in: pinned.document))
                value = kind == "on-off-ab-test" ? .bool(variant == "Enabled") : .string(variant)
                reason = "SPLIT"
                let written = entry["test-variations"]?.array?.compactMap(\.string) ?? []
                if let index = written.firstIndex(where: { $0.lowercased() == variant.lowercased() }),
                    let label = entry["labels"]?[index]?.string
                {
                    metadata.append(("label", .string(label)))
                }
            }
        }
        return [
            "key": .string(name), "value": value, "reason": .string(reason), "variant": .string(variant),
            "metadata": .object(JSONObject(metadata.map { .init(key: $0.0, value: $0.1) })),
        ]
    }

    /// `answer` is the contract's `expected`, members in any order.
    static func expectAnswer(
        _ answer: JSONValue?, _ expected: JSONValue, _ what: String,
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) {
        #expect(
            answer.map { BucketeerApp.same($0, expected) } == true,
            "\(what): got \(answer ?? .null), expected \(expected)", sourceLocation: sourceLocation)
    }

    /// An error of the wire format: its status, `errorCode`, `errorDetails` text (the Python
    /// provider reads it unconditionally) and, for a single flag, its key.
    static func expectError(
        _ response: TestResponse, _ status: HTTPResponse.Status, _ code: String, key: String?,
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws {
        #expect(response.status == status, "\(response.status): \(response.text)", sourceLocation: sourceLocation)
        let body = try response.json
        #expect(body["errorCode"] == .string(code), "\(response.text)", sourceLocation: sourceLocation)
        #expect(body["errorDetails"]?.string?.isEmpty == false, "errorDetails", sourceLocation: sourceLocation)
        if let key { #expect(body["key"] == .string(key), "key", sourceLocation: sourceLocation) }
    }

    @Test(
        "Every flag's single evaluation, for a recorded user and a new one, is what their pinned features.json gives a device"
    )
    func singleAgainstPinned() async throws {
        let demo = try await DemoServer()
        try await demo.test { client in
            for (user, isRecordedFirst) in [("demo-user-7", true), ("ofrep-protocol-user-1", false)] {
                // A recorded user has their document first; a new one asks OFREP first.
                var pinned: (document: [UInt8], entries: [String: JSONValue], revision: Int)?
                if isRecordedFirst { pinned = try await Self.pinned(client, user) }
                var answers: [String: TestResponse] = [:]
                for name in DemoServer.allFlags.sorted() {
                    answers[name] = try await client.send(
                        .post, "\(Self.production)/\(segment(name))", body: Self.context(user))
                }
                if pinned == nil { pinned = try await Self.pinned(client, user) }
                for (name, response) in answers {
                    #expect(response.status == .ok, "\(user) \(name)")
                    Self.expectAnswer(
                        try response.json, try Self.expected(name, try #require(pinned)), "\(user) \(name)")
                }
                // A JSON 2 is an integer to the providers: a double is written 2.0.
                #expect(answers["discountRate"]?.text.contains(#""value":2.0,"#) == true)
            }
            // Attributes of every JSON type beside the targetingKey are the provider's to send.
            let attributes =
                #""email": "a@example.com", "age": 42, "ratio": 0.5, "beta": false, "tags": ["a", 1], "address": {"country": "CA"}, "none": null"#
            let response = try await client.send(
                .post, "\(Self.production)/\(segment(BucketeerAppTests.abTest))",
                body: Self.context("demo-user-7", attributes))
            #expect(response.status == .ok, "\(response.text)")
            Self.expectAnswer(
                try response.json,
                try Self.expected(BucketeerAppTests.abTest, try await Self.pinned(client, "demo-user-7")),
                "with attributes of every JSON type")
        }
    }

    @Test("Keys are one escaped path segment, echoed as sent; an unknown one is FLAG_NOT_FOUND with its key")
    func escapedKeys() async throws {
        let demo = try await DemoServer()
        try await demo.test { client in
            let slashed = try await client.send(
                .post, "\(Self.production)/Example%20A%2FB%20Test", body: Self.context("demo-user-7"))
            #expect(try slashed.status == .ok && slashed.json["key"] == .string("Example A/B Test"))
            for name in ["Gr\u{F6}\u{DF}entabelle", "No Such Flag"] {
                let response = try await client.send(
                    .post, "\(Self.production)/\(segment(name))", body: Self.context("demo-user-7"))
                try Self.expectError(response, .notFound, "FLAG_NOT_FOUND", key: name)
            }
            #expect(segment("Gr\u{F6}\u{DF}entabelle") == "Gr%C3%B6%C3%9Fentabelle", "UTF-8, escaped")
        }
    }

    @Test(
        "Without a targetingKey, flags and static configs answer as the shared document has them; each test fails alone"
    )
    func withoutTargetingKey() async throws {
        let demo = try await DemoServer()
        try await demo.test { client in
            let shared = try await Self.pinned(client)
            for name in DemoServer.allFlags.sorted() {
                let response = try await client.send(.post, "\(Self.production)/\(segment(name))", body: Self.context())
                if DemoServer.tests.contains(name) {
                    try Self.expectError(response, .badRequest, "TARGETING_KEY_MISSING", key: name)
                } else if name != "mainViewTitle" {
                    // mainViewTitle follows a test: the contract leaves open whether it fails or answers its default.
                    #expect(response.status == .ok, "\(name)")
                    Self.expectAnswer(try response.json, try Self.expected(name, shared), "\(name) without a user")
                }
            }
            let bulk = try await client.send(.post, Self.production, body: Self.context())
            #expect(bulk.status == .ok)
            for item in try bulk.json["flags"]?.array ?? [] {
                let name = item["key"]?.string ?? ""
                if DemoServer.tests.contains(name) {
                    #expect(item["errorCode"] == .string("TARGETING_KEY_MISSING"), "\(name)")
                    #expect(item["errorDetails"]?.string?.isEmpty == false, "\(name)")
                } else if name != "mainViewTitle" {
                    Self.expectAnswer(item, try Self.expected(name, shared), "bulk \(name) without a user")
                }
            }
            #expect(try bulk.json["flags"]?.arrayCount == DemoServer.allFlags.count)
        }
    }

    @Test("Bodies that are no request: PARSE_ERROR or INVALID_CONTEXT, single and bulk, with errorDetails")
    func bodiesThatAreNoRequest() async throws {
        let demo = try await DemoServer()
        try await demo.test { client in
            let single = "\(Self.production)/\(segment("Example Feature Flag"))"
            for body in ["{not json", "", #"{"context": {"targetingKey": "demo-user-7"}"#] {
                let response = try await client.send(.post, single, body: body)
                try Self.expectError(response, .badRequest, "PARSE_ERROR", key: "Example Feature Flag")
            }
            for body in [
                #"{"context": 5}"#, #"{"context": []}"#, #"{"context": "demo-user-7"}"#,
                #"{"context": {"targetingKey": 7}}"#,
            ] {
                let response = try await client.send(.post, single, body: body)
                try Self.expectError(response, .badRequest, "INVALID_CONTEXT", key: "Example Feature Flag")
            }
            for body in ["{not json", ""] {
                try Self.expectError(
                    try await client.send(.post, Self.production, body: body), .badRequest, "PARSE_ERROR", key: nil)
            }
            for body in [#"{"context": 5}"#, #"{"context": []}"#, #"{"context": {"targetingKey": 7}}"#] {
                try Self.expectError(
                    try await client.send(.post, Self.production, body: body), .badRequest, "INVALID_CONTEXT", key: nil)
            }
        }
    }

    @Test("Other methods on single and bulk evaluation are 405 naming POST in Allow")
    func otherMethods() async throws {
        let demo = try await DemoServer()
        try await demo.test { client in
            for path in ["\(Self.production)/\(segment("Example Feature Flag"))", Self.production] {
                for method in [HTTPRequest.Method.get, .put, .delete, .patch] {
                    let response = try await client.send(method, path)
                    #expect(response.status == .methodNotAllowed, "\(method) \(path)")
                    let allowed = (response.headers[.allow] ?? "").split(separator: ",").map {
                        $0.trimmingCharacters(in: .whitespaces)
                    }
                    #expect(allowed.contains("POST"), "\(method) \(path): Allow \(allowed)")
                }
            }
        }
    }

    @Test(
        "The private environment takes its tenant's key as Bearer or X-API-Key; the root answers a scoped key as its environment"
    )
    func keysOnPrivateAndRoot() async throws {
        let demo = try await DemoServer()
        let unknown = "fp_" + String(repeating: "0", count: 48)
        try await demo.test { client in
            let body = Self.context("demo-user-7")
            for path in ["\(Self.staging)/\(segment("Example Feature Flag"))", Self.staging] {
                #expect(try await client.send(.post, path, body: body).status == .unauthorized, "\(path)")
                for fields in [[HTTPField.Name.authorization: "Bearer \(unknown)"], [.xAPIKey: unknown]] {
                    #expect(try await client.send(.post, path, headers: fields, body: body).status == .unauthorized)
                }
                for fields in [[HTTPField.Name.authorization: "Bearer \(demo.admin)"], [.xAPIKey: demo.admin]] {
                    let response = try await client.send(.post, path, headers: fields, body: body)
                    #expect(response.status == .ok && (try? response.json) != nil, "\(path) \(fields.keys)")
                }
            }
            // The host root, with a delivery key scoped to production: production's answers.
            for name in DemoServer.allFlags.sorted() {
                let atRoot = try await client.send(
                    .post, "\(Self.root)/\(segment(name))", key: demo.productionKey, body: body)
                let inEnvironment = try await client.send(.post, "\(Self.production)/\(segment(name))", body: body)
                #expect(atRoot.status == .ok, "\(name) at the root")
                #expect(BucketeerApp.same(try atRoot.json, try inEnvironment.json), "\(name) at the root")
            }
            let bulk = try await client.send(.post, Self.root, key: demo.productionKey, body: body)
            #expect(Set(try bulk.json["flags"]?.array?.compactMap { $0["key"]?.string } ?? []) == DemoServer.allFlags)
            let viaHeader = try await client.send(
                .post, "\(Self.root)/\(segment("Example Feature Flag"))", headers: [.xAPIKey: demo.productionKey],
                body: body)
            #expect(viaHeader.status == .ok)
            #expect(
                try await client.send(.post, "\(Self.root)/\(segment("Example Feature Flag"))", body: body).status
                    == .unauthorized)
            #expect(try await client.send(.post, Self.root, body: body).status == .unauthorized)
            // A tenant-wide admin key names no environment: the root can't answer it with one.
            let admin = try await client.send(
                .post, "\(Self.root)/\(segment("Example Feature Flag"))", key: demo.admin, body: body)
            #expect((400..<500).contains(Int(admin.status.code)), "\(admin.status)")
        }
    }

    @Test(
        "Bulk: the single answers, a strong ETag per context, 304 for every form of If-None-Match that names it, eventStreams"
    )
    func bulkAndETags() async throws {
        let demo = try await DemoServer()
        try await demo.test { client in
            let user = "demo-user-7"
            let revision = try await Self.pinned(client, user).revision
            let response = try await client.send(.post, Self.production, body: Self.context(user))
            #expect(response.status == .ok)
            let body = try response.json
            let items = body["flags"]?.array ?? []
            #expect(Set(items.compactMap { $0["key"]?.string }).count == items.count, "one item per flag")
            #expect(Set(items.compactMap { $0["key"]?.string }) == DemoServer.allFlags)
            for item in items {
                let name = item["key"]?.string ?? ""
                let single = try await client.send(
                    .post, "\(Self.production)/\(segment(name))", body: Self.context(user))
                #expect(BucketeerApp.same(item, try single.json), "\(name): the bulk item is the single answer")
            }
            #expect(body["metadata"]?["revision"] == .number(Double(revision)))
            let streams: JSONValue = [
                "type": .string("sse"), "endpoint": ["requestUri": .string("/t/demo/production/changes")],
                "inactivityDelaySec": .number(120),
            ]
            #expect(body["eventStreams"]?.array?.count == 1)
            #expect(body["eventStreams"]?[0].map { BucketeerApp.same($0, streams) } == true, "\(body)")
            let etag = try #require(response.headers[.eTag])
            #expect(etag.wholeMatch(of: /"[\x21\x23-\x7e]*"/) != nil, "a strong ETag: \(etag)")

            let again = try await client.send(.post, Self.production, body: Self.context(user))
            #expect(again.headers[.eTag] == etag && again.text == response.text)
            for condition in [etag, #""not-this-one", \#(etag)"#, "W/\(etag)"] {
                let notModified = try await client.send(
                    .post, Self.production, headers: [.ifNoneMatch: condition], body: Self.context(user))
                #expect(notModified.status == .notModified, "If-None-Match: \(condition)")
                #expect(notModified.body.readableBytes == 0 && notModified.headers[.eTag] == etag, "\(condition)")
            }
            let stale = try await client.send(
                .post, Self.production, headers: [.ifNoneMatch: #""not-this-one""#], body: Self.context(user))
            #expect(stale.status == .ok)
            // The re-fetch an event triggers may carry the event's metadata: it changes nothing.
            let refetch = try await client.send(
                .post, Self.production + "?flagConfigEtag=abc123&flagConfigLastModified=1771622898",
                body: Self.context(user))
            #expect(refetch.status == .ok && refetch.headers[.eTag] == etag)

            // One ETag per context, the attributes included; another context's never gives 304.
            let contexts = [
                Self.context("demo-user-7"), Self.context("demo-user-8"),
                Self.context("demo-user-7", #""development": true"#), Self.context("ofrep-protocol-user-1"),
                Self.context("ofrep-protocol-user-2"),
            ]
            var etags: [String] = []
            for context in contexts {
                etags.append(try await client.send(.post, Self.production, body: context).headers[.eTag] ?? "")
            }
            #expect(Set(etags).count == contexts.count, "\(etags)")
            for (asked, context) in contexts.enumerated() {
                for (other, otherETag) in etags.enumerated() where other != asked {
                    let answer = try await client.send(
                        .post, Self.production, headers: [.ifNoneMatch: otherETag], body: context)
                    #expect(answer.status == .ok, "\(context) with the ETag of \(contexts[other])")
                }
            }

            // The private environment's stream is advertised with a token: EventSource can't send a header.
            let staged = try await client.send(.post, Self.staging, key: demo.admin, body: Self.context(user)).json
            #expect(staged["eventStreams"]?.arrayCount == 1)
            #expect(staged["eventStreams"]?[0]?["type"] == .string("sse"))
            #expect(staged["eventStreams"]?[0]?["inactivityDelaySec"] == .number(120))
            let uri = try #require(staged["eventStreams"]?[0]?["endpoint"]?["requestUri"]?.string)
            #expect(uri.wholeMatch(of: /\/t\/demo\/staging\/changes\?token=[^&#\s]+/) != nil, "\(uri)")
            #expect(!uri.hasSuffix("=" + demo.admin), "the token is not the caller's key")
        }
    }

    @Test("?tag= selects features and configs; a filtered answer has its own ETag; a tag nothing has is no flag")
    func tagFiltering() async throws {
        let demo = try await DemoServer()
        try await demo.test { client in
            let tag = "ofrep-check"
            try await demo.admin(
                client, .put, DemoServer.feature("Example Feature Flag") + "/tags", body: #"{"tags": ["\#(tag)"]}"#)
            let definition = try await demo.admin(client, .get, "/configs/numberOfItemsToDisplay").json
            guard case .object(var config) = definition else { throw CancellationError() }
            let tags = (config["tags"]?.array ?? []) + [.string(tag)]
            config.members.removeAll { $0.key == "tags" }
            config.append("tags", .array(tags))
            try await demo.admin(
                client, .put, "/configs/numberOfItemsToDisplay",
                body: JSONWriter(style: .compact).string(of: .object(config)))

            let everything = try await client.send(.post, Self.production, body: Self.context("demo-user-7"))
            let tagged = try await client.send(
                .post, Self.production + "?tag=\(tag)", body: Self.context("demo-user-7"))
            #expect(
                (try tagged.json["flags"]?.array ?? []).compactMap { $0["key"]?.string }.sorted()
                    == ["Example Feature Flag", "numberOfItemsToDisplay"])
            let etag = try #require(tagged.headers[.eTag])
            #expect(etag != everything.headers[.eTag], "another representation, another ETag")
            #expect(
                try await client.send(
                    .post, Self.production + "?tag=\(tag)", headers: [.ifNoneMatch: etag],
                    body: Self.context("demo-user-7")
                ).status == .notModified)
            #expect(
                try await client.send(
                    .post, Self.production, headers: [.ifNoneMatch: etag], body: Self.context("demo-user-7")
                ).status == .ok)
            let none = try await client.send(
                .post, Self.production + "?tag=no-such-tag", body: Self.context("demo-user-7"))
            #expect(try none.status == .ok && none.json["flags"] == .array([]))
        }
    }

    @Test(
        "Past an anonymous client's new users, single and bulk evaluation answer 429 with Retry-After in whole seconds")
    func newUserLimit() async throws {
        // One new user at once, then one each 1 000 s: the limit holds however slow the machine.
        let demo = try await DemoServer(
            configuration: ServerConfiguration(accessLogLevel: .warning, newUsersPerSecond: 0.001, newUserBurst: 1))
        try await demo.test { client in
            for path in ["\(Self.production)/\(segment("Example MVT Test"))", Self.production] {
                var limited: TestResponse?
                for index in 0..<4 {
                    let response = try await client.send(
                        .post, path, body: Self.context("limited-\(path.count)-\(index)"))
                    if response.status == .tooManyRequests {
                        limited = response
                        break
                    }
                    #expect(response.status == .ok)
                }
                let retryAfter = try #require(limited, "\(path): no 429").headers[.retryAfter] ?? ""
                // The Python provider parses integer seconds (or an HTTP date), not the spec's ISO 8601 example.
                #expect(retryAfter.wholeMatch(of: /[0-9]+/) != nil, "Retry-After: \(retryAfter)")
            }
        }
    }
}
