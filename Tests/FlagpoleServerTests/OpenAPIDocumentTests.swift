import FlagpoleCore
import FlagpoleStore
import Foundation
import Testing

@testable import FlagpoleServer

/// openapi.json, at the repository's root, describes the API: a route the router has and the
/// document lacks (or the reverse) fails here.
@Suite("The OpenAPI document")
struct OpenAPIDocumentTests {
    static let document: JSONValue = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("openapi.json")
        return try! JSONParser.parse(Array(try! Data(contentsOf: url))).value
    }()

    @Test("It is OpenAPI 3.1 with a bearer security scheme")
    func header() {
        #expect(Self.document["openapi"]?.string?.hasPrefix("3.1") == true)
        #expect(Self.document["components"]?["securitySchemes"]?["bearer"]?["scheme"] == .string("bearer"))
    }

    @Test("Every route of the router is in it, and nothing else")
    func everyRouteIsDocumented() throws {
        let router = ServerApplication.router(
            store: try FeatureStore.inMemory(), configuration: ServerConfiguration(), registry: testRegistry)
        // The dashboard's HTML pages are for browsers, not API clients: openapi.json leaves them out.
        let routes = Set(
            router.routes.filter { $0.method != .head && !Dashboard.isPage($0.path.description) }.map {
                "\($0.method) \($0.path)"
            })
        guard case .object(let paths)? = Self.document["paths"] else {
            Issue.record("openapi.json has no paths")
            return
        }
        let methods = ["get", "put", "post", "delete", "patch", "head", "options"]
        let documented = Set(
            paths.members.flatMap { path -> [String] in
                guard case .object(let operations) = path.value else { return [] }
                return operations.keys.filter(methods.contains).map { "\($0.uppercased()) \(path.key)" }
            })
        #expect(routes.subtracting(documented).sorted() == [], "routes missing from openapi.json")
        #expect(documented.subtracting(routes).sorted() == [], "documented routes the server does not have")
    }

    @Test("Every operation has an id, a summary and its responses")
    func operationsAreComplete() {
        guard case .object(let paths)? = Self.document["paths"] else { return }
        for path in paths.members {
            guard case .object(let operations) = path.value else { continue }
            for operation in operations.members where ["get", "put", "post", "delete", "patch"].contains(operation.key)
            {
                #expect(operation.value["operationId"]?.string != nil, "\(operation.key) \(path.key)")
                #expect(operation.value["summary"]?.string != nil, "\(operation.key) \(path.key)")
                #expect(operation.value["responses"] != nil, "\(operation.key) \(path.key)")
            }
        }
    }
}
