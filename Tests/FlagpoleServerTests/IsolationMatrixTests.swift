import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import FlagpoleServer

/// Every tenant-scoped route × (no key, another tenant's key, a key with too little role):
/// 401, 404 and 403, answering nothing of the tenant's data. The routes come from the router
/// itself, so a new route fails here until its role is listed.
@Suite("Tenant isolation and roles, route by route")
struct IsolationMatrixTests {
    /// The role each tenant-scoped route needs (see `KeyRole`).
    static let requiredRoles: [String: KeyRole] = [
        "GET /api/v1/tenants/{tenant}": .reader,
        "GET /api/v1/tenants/{tenant}/environments": .reader,
        "POST /api/v1/tenants/{tenant}/environments": .admin,
        "GET /api/v1/tenants/{tenant}/environments/{env}": .reader,
        "PATCH /api/v1/tenants/{tenant}/environments/{env}": .admin,
        "GET /api/v1/tenants/{tenant}/keys": .admin,
        "POST /api/v1/tenants/{tenant}/keys": .admin,
        "DELETE /api/v1/tenants/{tenant}/keys/{prefix}": .admin,
        "POST /api/v1/tenants/{tenant}/environments/{env}/import": .editor,
        "GET /api/v1/tenants/{tenant}/environments/{env}/export": .reader,
        "GET /api/v1/tenants/{tenant}/environments/{env}/revisions": .reader,
        "GET /api/v1/tenants/{tenant}/environments/{env}/diff": .reader,
        "POST /api/v1/tenants/{tenant}/environments/{env}/rollback": .editor,
        "GET /api/v1/tenants/{tenant}/environments/{env}/features": .reader,
        "GET /api/v1/tenants/{tenant}/environments/{env}/features/{feature}": .reader,
        "POST /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/enable": .editor,
        "POST /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/disable": .editor,
        "POST /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/biases": .editor,
        "POST /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/rollout": .editor,
        "PUT /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/overrides/{user}": .editor,
        "DELETE /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/overrides/{user}": .editor,
        "PUT /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/unlocks/{user}": .editor,
        "DELETE /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/unlocks/{user}": .editor,
        "POST /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/assignments": .editor,
        "GET /api/v1/tenants/{tenant}/environments/{env}/assignments": .reader,
        "GET /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/stats": .reader,
        "GET /api/v1/tenants/{tenant}/environments/{env}/unlocks": .reader,
        "GET /api/v1/tenants/{tenant}/environments/{env}/evaluate": .reader,
        "GET /api/v1/tenants/{tenant}/environments/{env}/configs": .reader,
        "PUT /api/v1/tenants/{tenant}/environments/{env}/configs": .editor,
        "GET /api/v1/tenants/{tenant}/environments/{env}/configs/{config}": .reader,
        "PUT /api/v1/tenants/{tenant}/environments/{env}/configs/{config}": .editor,
        "DELETE /api/v1/tenants/{tenant}/environments/{env}/configs/{config}": .editor,
        "PUT /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/tags": .editor,
        "GET /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/rules": .reader,
        "GET /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/results": .reader,
        "PUT /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/results/control": .editor,
        "DELETE /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/results/control": .editor,
        "GET /api/v1/tenants/{tenant}/environments/{env}/triggers": .reader,
        "POST /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/triggers": .editor,
        "DELETE /api/v1/tenants/{tenant}/environments/{env}/triggers/{prefix}": .editor,
        "GET /api/v1/tenants/{tenant}/environments/{env}/webhooks": .reader,
        "POST /api/v1/tenants/{tenant}/environments/{env}/webhooks": .editor,
        "DELETE /api/v1/tenants/{tenant}/environments/{env}/webhooks/{id}": .editor,
        "GET /api/v1/tenants/{tenant}/environments/{env}/ramps": .reader,
        "GET /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/ramp": .reader,
        "POST /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/ramp": .editor,
        "POST /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/ramp/pause": .editor,
        "POST /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/ramp/resume": .editor,
        "POST /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/ramp/advance": .editor,
        "POST /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/ramp/abort": .editor,
        "GET /api/v1/tenants/{tenant}/environments/{env}/goals": .reader,
        "POST /api/v1/tenants/{tenant}/environments/{env}/goals": .editor,
        "PUT /api/v1/tenants/{tenant}/environments/{env}/features/{feature}/rules": .editor,
        "GET /api/v1/tenants/{tenant}/environments/{env}/segments": .reader,
        "GET /api/v1/tenants/{tenant}/environments/{env}/segments/{segment}": .reader,
        "PUT /api/v1/tenants/{tenant}/environments/{env}/segments/{segment}": .editor,
        "DELETE /api/v1/tenants/{tenant}/environments/{env}/segments/{segment}": .editor,
        "DELETE /api/v1/tenants/{tenant}/users/{user}": .admin,
        "GET /api/v1/tenants/{tenant}/members": .admin,
        "POST /api/v1/tenants/{tenant}/members": .admin,
        "PATCH /api/v1/tenants/{tenant}/members/{email}": .admin,
        "DELETE /api/v1/tenants/{tenant}/members/{email}": .admin,
        "POST /api/v1/tenants/{tenant}/members/{email}/invitation": .admin,
    ]

    /// The routes of the real router that act on one tenant.
    static var tenantRoutes: [(method: HTTPRequest.Method, template: String)] {
        get throws {
            let router = ServerApplication.router(
                store: try FeatureStore.inMemory(), configuration: ServerConfiguration(), registry: testRegistry)
            return router.routes
                .map { (method: $0.method, template: $0.path.description) }
                .filter { $0.template.hasPrefix("/api/v1/tenants/{tenant}") }
        }
    }

    @Test("Every tenant-scoped route of the router has its role listed here")
    func everyRouteIsInTheMatrix() throws {
        let routes = try Self.tenantRoutes.map { "\($0.method) \($0.template)" }
        #expect(Set(routes) == Set(Self.requiredRoles.keys), "routes missing from the matrix, or listed but gone")
    }

    /// `template` with acme's names filled in; `tenant` replaces acme.
    static func uri(_ template: String, tenant: String = "acme", keyPrefix: String) -> String {
        let feature = template.contains("unlocks") ? "Example Unlock Flag" : TestServer.abTest
        return
            template
            .replacingOccurrences(of: "{tenant}", with: tenant)
            .replacingOccurrences(of: "{env}", with: "production")
            .replacingOccurrences(of: "{feature}", with: segment(feature))
            .replacingOccurrences(of: "{user}", with: "user-1")
            .replacingOccurrences(of: "{email}", with: "ada%40example.com")
            .replacingOccurrences(of: "{prefix}", with: keyPrefix)
            .replacingOccurrences(of: "{config}", with: "mainViewTitle")
            .replacingOccurrences(of: "{segment}", with: "beta-testers")
            .replacingOccurrences(of: "{key}", with: segment(TestServer.abTest))
            + (template.hasSuffix("/diff") ? "?from=1&to=1" : template.hasSuffix("/evaluate") ? "?user=user-1" : "")
    }

    /// A key role just below `role` that can act on the tenant, if any.
    static func roleBelow(_ role: KeyRole) -> KeyRole {
        switch role {
        case .admin: .editor
        case .editor: .reader
        case .reader, .delivery, .serverAdmin: .delivery
        }
    }

    @Test("No key is 401, another tenant's key is the 404 of an unknown tenant, too little role is 403; none writes")
    func matrix() async throws {
        let server = try await TestServer()
        // A key of its own for `DELETE keys/{prefix}`: revoking one the matrix uses would turn the
        // routes after it into 401s.
        let acmeKeyPrefix = try await server.store.access.createKey(
            for: .tenant(TenantSlug(rawValue: "acme")), role: .reader
        ).info.prefix
        let before = try await server.store.catalog.revisions(of: TestServer.acme)
        let routes = try Self.tenantRoutes
        try await server.test { client in
            for route in routes {
                let name = "\(route.method) \(route.template)"
                let role = try #require(Self.requiredRoles[name])
                let uri = Self.uri(route.template, keyPrefix: acmeKeyPrefix)
                let body = "{}"

                let anonymous = try await client.send(route.method, uri, body: body)
                #expect(anonymous.status == .unauthorized, "\(name) without a key")
                #expect(anonymous.errorCode == "unauthenticated")

                let foreign = try await client.send(route.method, uri, key: server.key("globex", .admin), body: body)
                let unknown = try await client.send(
                    route.method, Self.uri(route.template, tenant: "nobody", keyPrefix: acmeKeyPrefix),
                    key: server.key("globex", .admin), body: body)
                #expect(foreign.status == .notFound, "\(name) with another tenant's key")
                #expect(
                    foreign.text.replacingOccurrences(of: "acme", with: "nobody").replacing(
                        /"requestId":"[0-9a-f]+"/, with: "")
                        == unknown.text.replacing(/"requestId":"[0-9a-f]+"/, with: ""),
                    "\(name): another tenant's data looks like no tenant at all")

                let weak = try await client.send(
                    route.method, uri, key: server.key("acme", Self.roleBelow(role)), body: body)
                #expect(weak.status == .forbidden, "\(name) with a \(Self.roleBelow(role)) key")
                #expect(!weak.text.contains("Example"))

                let enough = try await client.send(route.method, uri, key: server.key("acme", role), body: body)
                #expect(
                    ![.unauthorized, .forbidden].contains(enough.status), "\(name) with a \(role) key: \(enough.status)"
                )
            }
        }
        // Only the calls with enough role may have written; the refused ones before them did not.
        #expect(try await server.store.access.keys(of: .tenant(TenantSlug(rawValue: "globex"))).count == 4)
        #expect(before.count == 1)
    }

    /// The routes anyone may call: delivery, OFREP under an environment and its change stream
    /// (a private environment's key, or the stream's token, is checked before anything is read),
    /// operations, signing in, the dashboard's assets and the docs. Every other route must be registered
    /// under an authenticated context, or be OFREP at the host's root, which needs a key scoped
    /// to one environment.
    static let publicRoutes: Set<String> = [
        "GET /t/{tenant}/{env}/features.json",
        "GET /t/{tenant}/{env}/configs.json",
        "POST /t/{tenant}/{env}/ofrep/v1/evaluate/flags/{key}",
        "POST /t/{tenant}/{env}/ofrep/v1/evaluate/flags",
        "POST /t/{tenant}/{env}/get_evaluations",
        "GET /t/{tenant}/{env}/changes",
        "GET /healthz",
        "GET /metrics",
        "GET /login",
        "POST /login",
        // A one-time link's page: the token is the credential.
        "GET /welcome",
        "POST /welcome",
        "GET /dashboard.css",
        "GET /dashboard.js",
        // The docs of the version running: nothing of any tenant's.
        "GET /docs/{page}",
        // An alert's call: the trigger's token is the credential.
        "POST /triggers",
    ]

    /// Every route of the real router.
    static var allRoutes: [(method: HTTPRequest.Method, template: String)] {
        get throws {
            let router = ServerApplication.router(
                store: try FeatureStore.inMemory(), configuration: ServerConfiguration(), registry: testRegistry)
            return router.routes.map { (method: $0.method, template: $0.path.description) }
        }
    }

    @Test("Every route is on the public list or refuses a request without credentials, whatever its handler does")
    func everyRouteIsPublicOrAuthenticated() async throws {
        let server = try await TestServer()
        let acmeKeyPrefix = try await server.store.access.keys(of: .tenant(TenantSlug(rawValue: "acme"))).first!.prefix
        let routes = try Self.allRoutes
        let names = Set(routes.map { "\($0.method) \($0.template)" })
        #expect(Self.publicRoutes.isSubset(of: names), "public routes listed here but gone from the router")
        let before = try await server.store.catalog.revisions(of: TestServer.acme)
        try await server.test { client in
            for route in routes where !Self.publicRoutes.contains("\(route.method) \(route.template)") {
                let name = "\(route.method) \(route.template)"
                let uri = Self.uri(route.template, keyPrefix: acmeKeyPrefix)
                let anonymous = try await client.send(route.method, uri, body: "{}")
                if route.template.hasPrefix("/api/") {
                    #expect(anonymous.status == .unauthorized, "\(name) without a key: \(anonymous.status)")
                    #expect(anonymous.errorCode == "unauthenticated", "\(name)")
                    // Every admin route needs more than fetching documents.
                    let delivery = try await client.send(
                        route.method, uri, key: server.key("acme", .delivery), body: "{}")
                    #expect(delivery.status == .forbidden, "\(name) with a delivery key: \(delivery.status)")
                } else if route.template.hasPrefix("/ofrep/") {
                    // OFREP at the root answers in OFREP's shape: the environment is the key's.
                    #expect(anonymous.status == .unauthorized, "\(name) without a key: \(anonymous.status)")
                    #expect(try anonymous.json["errorCode"] == .string("GENERAL"), "\(name)")
                    let unscoped = try await client.send(
                        route.method, uri, key: server.key("acme", .delivery), body: "{}")
                    #expect(
                        unscoped.status == .forbidden, "\(name) with a key of no one environment: \(unscoped.status)")
                } else if Self.isBucketeerAtRoot(route.template) {
                    // Bucketeer at the root answers in the SDK's shape: the environment is the key's.
                    #expect(anonymous.status == .unauthorized, "\(name) without a key: \(anonymous.status)")
                    #expect(try anonymous.json["error"]?["code"] == .number(401), "\(name)")
                } else if route.template.hasPrefix("/t/") {
                    // Events are writes: a key even in a public environment.
                    #expect(anonymous.status == .unauthorized, "\(name) without a key: \(anonymous.status)")
                } else {
                    #expect(anonymous.status == .seeOther, "\(name) without a session: \(anonymous.status)")
                    #expect(
                        anonymous.headers[.location]?.hasPrefix("/login?next=") == true,
                        "\(name) sends the browser to sign in")
                }
            }
        }
        #expect(try await server.store.catalog.revisions(of: TestServer.acme).count == before.count)
    }

    /// What each delivery route admits (`DeliveryNeeds`), as the refusals its protocol answers.
    enum DeliveryRule {
        /// features.json, configs.json, the change stream: a private environment refuses no key
        /// or an unknown one `401`, and another tenant's or environment's key with the `404` of
        /// no environment at all; a public one admits anyone.
        case document
        /// Events: as a document, but always, public or private.
        case events
        /// OFREP under the environment: an unknown key is `401` anywhere; a private environment
        /// refuses no key `401`, another tenant's or environment's `403`.
        case evaluation
        /// OFREP and Bucketeer at the host root: only a delivery key scoped to the environment.
        case rootEvaluation
        /// Bucketeer's `get_evaluations` under the environment: a public one admits any key (the
        /// SDK can't send none); a private one refuses no key or an unknown one `401`, another
        /// tenant's or environment's `403`.
        case bucketeerEvaluations
        /// Its `register_events`: a key of the environment always; `401`, else `403`.
        case bucketeerEvents
    }

    /// The Bucketeer SDK's calls at the host root, which a scoped delivery key places.
    static func isBucketeerAtRoot(_ template: String) -> Bool {
        ["/get_evaluations", "/register_events"].contains(template)
    }

    /// Every delivery route of the router, with its rule: a new one fails here until listed.
    static let deliveryRules: [String: DeliveryRule] = [
        "GET /t/{tenant}/{env}/features.json": .document,
        "GET /t/{tenant}/{env}/configs.json": .document,
        "GET /t/{tenant}/{env}/changes": .document,
        "POST /t/{tenant}/{env}/events": .events,
        "POST /t/{tenant}/{env}/ofrep/v1/evaluate/flags/{key}": .evaluation,
        "POST /t/{tenant}/{env}/ofrep/v1/evaluate/flags": .evaluation,
        "POST /ofrep/v1/evaluate/flags/{key}": .rootEvaluation,
        "POST /ofrep/v1/evaluate/flags": .rootEvaluation,
        "POST /t/{tenant}/{env}/get_evaluations": .bucketeerEvaluations,
        "POST /t/{tenant}/{env}/register_events": .bucketeerEvents,
        "POST /get_evaluations": .rootEvaluation,
        "POST /register_events": .rootEvaluation,
    ]

    @Test(
        "Every delivery route × (no key, an unknown key, another tenant's, another environment's, each role of this one) in a private and a public environment"
    )
    func deliveryMatrix() async throws {
        let server = try await TestServer()
        let acme = TenantSlug(rawValue: "acme")
        let scopedHere = try await server.store.access.createKey(
            for: .tenant(acme), role: .delivery, environment: .production
        )
        .secret
        _ = try await server.store.access.createEnvironment(
            EnvironmentPath(tenant: TenantSlug(rawValue: "acme"), environment: EnvironmentName(rawValue: "staging")))
        let scopedElsewhere = try await server.store.access.createKey(
            for: .tenant(acme), role: .delivery, environment: EnvironmentName(rawValue: "staging")
        ).secret
        let routes = try Self.allRoutes.filter {
            $0.template.hasPrefix("/t/") || $0.template.hasPrefix("/ofrep/") || Self.isBucketeerAtRoot($0.template)
        }
        #expect(Set(routes.map { "\($0.method) \($0.template)" }) == Set(Self.deliveryRules.keys))
        let unknownKey = "fp_" + String(repeating: "7", count: 48)
        let body = #"{"context": {"targetingKey": "user-1"}, "events": []}"#
        for isPrivate in [true, false] {
            try await server.store.access.updateDelivery(of: TestServer.acme) { $0.isPrivate = isPrivate }
            try await server.test { client in
                for route in routes {
                    let name = "\(route.method) \(route.template) (\(isPrivate ? "private" : "public"))"
                    let rule = try #require(Self.deliveryRules["\(route.method) \(route.template)"])
                    let uri = Self.uri(route.template, keyPrefix: "")
                    // The stream, once admitted, stays open: only its refusals are asked for.
                    let isStream = route.template.hasSuffix("/changes")
                    func status(_ key: String?) async throws -> HTTPResponse.Status {
                        try await client.send(route.method, uri, key: key, body: body).status
                    }
                    let refusesAnonymous =
                        isPrivate || [.events, .rootEvaluation, .bucketeerEvents].contains(rule)
                    if refusesAnonymous || !isStream {
                        #expect(
                            (try await status(nil) == .unauthorized) == refusesAnonymous, "\(name) without a key")
                    }
                    if refusesAnonymous || rule == .evaluation || !isStream {
                        let unknown = try await status(unknownKey)
                        #expect(
                            (unknown == .unauthorized) == (refusesAnonymous || rule == .evaluation),
                            "\(name) with an unknown key: \(unknown)")
                    }
                    guard !isStream || isPrivate else { continue }
                    for other in [server.key("globex", .admin), scopedElsewhere] {
                        let refused = try await status(other)
                        let expected: HTTPResponse.Status? =
                            switch rule {
                            case .document: isPrivate ? .notFound : nil
                            case .events: .notFound
                            case .evaluation: isPrivate ? .forbidden : nil
                            case .rootEvaluation: other == scopedElsewhere ? nil : .forbidden
                            case .bucketeerEvaluations: isPrivate ? .forbidden : nil
                            case .bucketeerEvents: .forbidden
                            }
                        if let expected {
                            #expect(refused == expected, "\(name) with a key not of this environment: \(refused)")
                        } else {
                            #expect(![.unauthorized, .forbidden].contains(refused), "\(name): \(refused)")
                        }
                    }
                    guard !isStream else { continue }
                    let own =
                        rule == .rootEvaluation
                        ? [scopedHere] : [scopedHere, server.key("acme", .reader), server.key("acme", .admin)]
                    for key in own {
                        let admitted = try await status(key)
                        #expect(
                            ![.unauthorized, .forbidden, .notFound].contains(admitted),
                            "\(name) with its own key: \(admitted)")
                    }
                }
            }
        }
    }

    @Test("The order of the checks: the path's names, then the key, then the tenant, then the role; the store last")
    func orderOfChecks() async throws {
        let server = try await TestServer()
        try await server.test { client in
            // A name that could not be a slug names nothing: 404 before asking for a key.
            for uri in ["/api/v1/tenants/Bad!/environments", "/api/v1/tenants/acme/environments/Bad!/features"] {
                let refused = try await client.send(.get, uri)
                #expect(refused.status == .notFound, "\(uri)")
                #expect(refused.errorCode == "not_found", "\(uri)")
            }
            // Valid names: the key comes first, then whether the tenant is the key's, then the role.
            let unknown = "/api/v1/tenants/nobody/environments/production/features"
            #expect(try await client.send(.get, unknown).status == .unauthorized)
            #expect(try await client.send(.get, unknown, key: "fp_nonsense").status == .unauthorized)
            #expect(try await client.send(.get, unknown, key: server.key("acme", .reader)).status == .notFound)
            let features = "/api/v1/tenants/acme/environments/production/features"
            #expect(try await client.send(.get, features, key: server.key("acme", .delivery)).status == .forbidden)
            // An environment that does not exist is the store's to say, once the key may ask.
            let missing = "/api/v1/tenants/acme/environments/nowhere/features"
            #expect(try await client.send(.get, missing).status == .unauthorized)
            #expect(try await client.send(.get, missing, key: server.key("acme", .delivery)).status == .forbidden)
            let notFound = try await client.send(.get, missing, key: server.key("acme", .reader))
            #expect(notFound.status == .notFound)
            #expect(notFound.errorCode == "not_found")
            // The dashboard: a name that could not be a slug is its 404 page, not a trip to sign in.
            let page = try await client.send(.get, "/tenants/Bad!/production")
            #expect(page.status == .notFound)
            #expect(try await client.send(.get, "/tenants/acme/production").status == .seeOther)
        }
    }

    @Test("Server routes: listing needs a key; creating tenants needs the server admin key")
    func serverRoutes() async throws {
        let server = try await TestServer()
        try await server.test { client in
            #expect(try await client.send(.get, "/api/v1/tenants").status == .unauthorized)
            #expect(try await client.send(.post, "/api/v1/tenants", body: #"{"slug": "x"}"#).status == .unauthorized)
            for role in [KeyRole.admin, .editor, .reader, .delivery] {
                let refused = try await client.send(
                    .post, "/api/v1/tenants", key: server.key("acme", role), body: #"{"slug": "x"}"#)
                #expect(refused.status == .forbidden, "\(role)")
            }
            #expect(
                try await client.send(.get, "/api/v1/tenants", key: server.key("acme", .delivery)).status == .forbidden)
            // The server admin acts in every tenant.
            #expect(
                try await client.send(.get, "/api/v1/tenants/globex/keys", key: server.serverAdminKey).status == .ok)
        }
    }
}
