import FlagpoleCore
import FlagpoleMigrations
import Foundation
import GRDB
import Testing

@testable import FlagpoleStore

/// The databases in Tests/Fixtures/migrations, one per schema version but the latest, each
/// written by the real `flagpole` of its time (Scripts/make-migration-fixtures), with what the
/// script recorded about it.
struct MigrationFixture: CustomTestStringConvertible, Sendable {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/migrations")

    /// `schema-0001`, …
    let name: String

    var testDescription: String { name }

    var url: URL { Self.directory.appendingPathComponent("\(name).sqlite") }

    /// Every fixture database in the folder, oldest schema first.
    static var all: [MigrationFixture] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".sqlite") }.sorted().map {
            MigrationFixture(name: String($0.dropLast(".sqlite".count)))
        }
    }

    /// What the script wrote beside the database.
    struct Manifest: Decodable {
        /// The last migration the file has.
        var schema: String
        /// Revisions per `tenant/environment`.
        var revisions: [String: Int]
        /// Rows of the per-user tables (schema 0002 and later).
        var counts: [String: Int]
        /// Recorded users per variation, by `tenant/environment/feature`.
        var recordedVariations: [String: [String: Int]]

        enum CodingKeys: String, CodingKey {
            case schema, revisions, counts
            case recordedVariations = "recorded_variations"
        }
    }

    func manifest() throws -> Manifest {
        try JSONDecoder().decode(
            Manifest.self, from: Data(contentsOf: Self.directory.appendingPathComponent("\(name).json")))
    }

    /// An editor key of tenant `acme` that the old binary made, when the script kept one.
    func editorKey() -> String? {
        (try? String(contentsOf: Self.directory.appendingPathComponent("\(name).key"), encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The old binary's export of an environment's current revision.
    func export(of path: EnvironmentPath) throws -> [UInt8] {
        Array(
            try Data(
                contentsOf: Self.directory.appendingPathComponent("\(name)/\(path.tenant)-\(path.environment).json")))
    }
}

@Suite("Migration fixtures")
struct MigrationFixtureTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "flagpole-fixtures-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    @Test("There is a fixture for every schema version but the latest, as the migrator lists them")
    func everyOlderSchemaHasAFixture() async throws {
        // The migrator's own list: what a fresh file gets.
        let fresh = directory.appendingPathComponent("fresh.sqlite").path
        _ = try FeatureStore.open(atPath: fresh)
        let migrations = try FeatureStore.migrationStatus(atPath: fresh).applied
        #expect(migrations == SchemaMigrations.all.map(\.identifier))

        let expected = migrations.dropLast().map { "schema-\($0.prefix(while: { $0 != "_" }))" }
        #expect(
            MigrationFixture.all.map(\.name) == Array(expected),
            """
            Tests/Fixtures/migrations must hold one database per schema version but the latest: \
            add schema-NNNN.sqlite with Scripts/make-migration-fixtures when adding a migration.
            """)
        for fixture in MigrationFixture.all {
            let manifest = try fixture.manifest()
            #expect(fixture.name == "schema-\(manifest.schema.prefix(while: { $0 != "_" }))")
        }
    }

    @Test(
        "An old file migrates to the latest schema with all its data, and takes new writes",
        arguments: MigrationFixture.all)
    func fixtureMigrates(_ fixture: MigrationFixture) async throws {
        // Given a copy of a file an older Flagpole wrote
        let manifest = try fixture.manifest()
        let path = directory.appendingPathComponent("\(fixture.name).sqlite").path
        try FileManager.default.copyItem(atPath: fixture.url.path, toPath: path)
        let before = try FeatureStore.migrationStatus(atPath: path)
        #expect(before.applied.last == manifest.schema)
        #expect(!before.pending.isEmpty)

        // When the current store opens it
        let store = try FeatureStore.open(atPath: path)

        // Then it has every migration, passes SQLite's checks, and holds all the data
        let after = try FeatureStore.migrationStatus(atPath: path)
        #expect(after.applied == SchemaMigrations.all.map(\.identifier))
        #expect(after.pending.isEmpty)
        #expect(try integrityCheck(path) == ["ok"])
        #expect(try await store.read { db in try db.rows("PRAGMA foreign_key_check").count } == 0)
        try await expectData(of: manifest, in: store, fixture: fixture)

        // And new writes work: an import, assignments, a key, a tenant
        let acme = EnvironmentPath.acmeProduction
        let latest = try #require(manifest.revisions["acme/production"])
        let file = try Fixtures.bytes("rwbutler-HEAD-Features.json")
        // 0012's file marked production "changes need a reason": a change given none is refused.
        if manifest.schema >= "0012" {
            let refused = await #expect(throws: DocumentError.self) {
                try await store.catalog.importDocument(file, into: acme, options: ImportOptions(actor: "test"))
            }
            #expect(refused?.code == "reason_required")
        }
        let imported = try await store.catalog.importDocument(
            file, into: acme, options: ImportOptions(message: "after migrating", actor: "test"))
        #expect(imported.status == .applied(revision: latest + 1))
        let summary = try await store.assignments.assign(
            UserID.numbered(10, prefix: "after-migration"), to: "Example A/B Test", in: acme)
        #expect(summary.recorded == 10)
        // The history's deltas (kept by triggers before 0006, by the store since) still add up
        // to the users recorded, after a bias change of the old file's users and the new ones.
        _ = try await store.catalog.setBiases(
            [25, 75], of: "Example A/B Test", in: acme, options: EditOptions(message: "after migrating", actor: "test"))
        #expect(try await store.read(Self.deltasDisagreeingWithAssignments).isEmpty)
        // Every environment older than 0012 is unmarked; 0012's file marked production. Each takes a marking.
        let environments = try await store.access.environments(of: acme.tenant)
        if manifest.schema < "0012" {
            #expect(environments.allSatisfy { $0.marking == EnvironmentMarking() })
        } else {
            let production = try #require(environments.first { $0.path == acme }).marking
            #expect(production.colour?.rawValue == "#c0392b" && production.requiresReason)
        }
        let colour = try EnvironmentColour(validating: "#c0392b")
        #expect(try await store.access.updateMarking(of: acme) { $0.colour = colour }.colour == colour)
        let key = try await store.access.createKey(for: .tenant(acme.tenant), role: .editor, name: "after migration")
        #expect(try await store.access.identity(ofKey: key.secret)?.actor == "service:after migration")
        // Every old key is a service's (0013), and the file takes members; 0013's file has Grace.
        #expect(try await store.access.keys(of: .tenant(acme.tenant)).allSatisfy { $0.member == nil })
        let members = try await store.access.members(of: acme.tenant).map(\.email)
        #expect(members == (manifest.schema < "0013" ? [] : ["grace@example.com"]))
        #expect(
            try await store.access.addMember("ada@example.com", name: "Ada", role: .admin, to: acme.tenant, by: "test")
                != nil)
        // The file takes a ramp (0014): its first step applied at once.
        let test = try await store.catalog.feature("Example A/B Test", in: acme).feature
        let ramp = try await store.rollouts.createRamp(
            RampRequest(
                feature: test.name, variation: test.effectiveVariations.last, steps: [80, 100],
                hold: .duration(seconds: 3600)),
            in: acme, actor: "test", now: Date())
        #expect(ramp.ramp.state == .running && ramp.applied.map(\.step) == [0])
        // A test takes a named control (0018), which its readout then compares with.
        try await store.experiments.setControl(
            of: test.name, to: test.effectiveVariations.last, in: acme, actor: "test")
        #expect(
            try await store.experiments.results(of: test.name, in: acme).namedControl == test.effectiveVariations.last)
        // 0014's file has an aborted ramp: it migrates without guards (0015), pausing when one would fail;
        // 0015's has a second, aborted after its guards looked: they migrate with their looks, no fetch counted (0016);
        // 0016's a third, with a webhook that its two events wait for; 0018's a fourth, whose two
        // events wait for that webhook and a Slack one.
        let ramps = try await store.rollouts.ramps(in: acme)
        let aborted =
            manifest.schema < "0014"
            ? 0 : manifest.schema < "0015" ? 1 : manifest.schema < "0016" ? 2 : manifest.schema < "0018" ? 3 : 4
        #expect(ramps.dropLast().map(\.state) == Array(repeating: .aborted, count: aborted))
        #expect(ramps.first.map { $0.guards.isEmpty && $0.onFailure == .pause && $0.looks.isEmpty } ?? true)
        if aborted >= 2 {
            #expect(ramps[1].guards.first == .goal("signup", threshold: -0.01, inPoints: true))
            #expect(ramps[1].onFailure == .rollback && !ramps[1].looks.isEmpty)
            #expect(ramps[1].applied.allSatisfy { $0.fetches.total == 0 })
        }
        let webhooks = try await store.outbound.webhooks(in: acme)
        let urls =
            manifest.schema < "0016"
            ? [] : ["http://127.0.0.1:9/flagpole"] + (manifest.schema < "0018" ? [] : ["http://127.0.0.1:9/slack"])
        #expect(webhooks.map(\.url.description) == urls)
        // Webhooks made before 0019 hear the six ramp and trigger events, not each revision: the
        // file's events, and the first step of the ramp made above.
        #expect(webhooks.allSatisfy { $0.events == StoreEventKind.beforeSubscriptions })
        let expectedDeliveries = manifest.schema < "0016" ? [] : manifest.schema < "0018" ? [3] : [5, 3]
        #expect(webhooks.map(\.deliveries.count) == expectedDeliveries)
        // A body written before 0019 is sent as written (a Slack one was already `{"text": …}`);
        // one written since is made in its webhook's format as it is sent.
        if let slack = webhooks.dropFirst().first {
            let due = try await store.outbound.claimDueDeliveries(now: .distantFuture, limit: 100)
                .filter { $0.webhookID == slack.id }
            #expect(due.count == 3 && due.count { $0.body(linkingFrom: nil) == $0.storedBody } == 2)
            for delivery in due {
                let body = try JSONValue(storedText: String(decoding: delivery.body(linkingFrom: nil), as: UTF8.self))
                guard case .object(let object) = body else { throw WebhookError.invalidFormat("not an object") }
                #expect(object.keys == ["text"])
            }
        }
        try await store.access.createTenant(TenantSlug(rawValue: "initech"))
        #expect(try await store.access.tenants().map(\.slug.rawValue) == ["acme", "globex", "initech"])

        // And a key the old binary made still identifies its owner and signs in to the dashboard
        if let secret = fixture.editorKey() {
            let identity = try await store.access.identity(ofKey: secret)
            #expect(identity?.owner == .tenant(acme.tenant) && identity?.role == .editor)
            #expect(try await store.access.openSession(withKey: secret)?.identity == identity)
        }
    }

    @Test(
        "A read-only open of an old file is refused with its pending migrations and leaves the file byte for byte",
        arguments: MigrationFixture.all)
    func fixtureRefusedReadOnly(_ fixture: MigrationFixture) throws {
        // Given a copy of a file an older Flagpole wrote
        let path = directory.appendingPathComponent("\(fixture.name).sqlite").path
        try FileManager.default.copyItem(atPath: fixture.url.path, toPath: path)
        let original = try Data(contentsOf: URL(fileURLWithPath: path))
        let pending = try FeatureStore.migrationStatus(atPath: path).pending

        // When a command that only reads opens it, then it is refused, naming what is pending and the way out
        #expect {
            try FeatureStore.open(atPath: path, access: .readOnly)
        } throws: { error in
            guard case StorageError.databaseNeedsMigration(let refused, let migrations) = error else { return false }
            let message = "\(error)"
            return refused == path && migrations == pending && !pending.isEmpty
                && pending.allSatisfy(message.contains) && message.contains("flagpole migrate --db \(path)")
        }

        // And nothing was migrated
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == original)
        #expect(try FeatureStore.migrationStatus(atPath: path).pending == pending)
    }

    @Test(
        "An old file is accepted by restore and migrated on the way in, and the file is left as it was",
        arguments: MigrationFixture.all)
    func fixtureRestores(_ fixture: MigrationFixture) async throws {
        let manifest = try fixture.manifest()
        let original = try Data(contentsOf: fixture.url)
        let file = directory.appendingPathComponent("\(fixture.name).sqlite").path
        try original.write(to: URL(fileURLWithPath: file))
        let target = directory.appendingPathComponent("restored.sqlite").path

        let outcome = try await FeatureStore.restore(fromPath: file, intoPath: target)

        #expect(outcome.fileSchemaVersion == manifest.schema)
        #expect(outcome.restored.schemaVersion == SchemaMigrations.all.last?.identifier)
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == original)
        #expect(try integrityCheck(target) == ["ok"])
        try await expectData(of: manifest, in: try FeatureStore.open(atPath: target), fixture: fixture)
    }

    /// Tenants, environments, contiguous revisions, exports and per-user rows as the manifest has them.
    private func expectData(
        of manifest: MigrationFixture.Manifest, in store: FeatureStore, fixture: MigrationFixture
    ) async throws {
        var environments: [String] = []
        for tenant in try await store.access.tenants() {
            environments += tenant.environments.map { "\(tenant.slug)/\($0)" }
        }
        #expect(environments.sorted() == manifest.revisions.keys.sorted())

        for (name, count) in manifest.revisions.sorted(by: { $0.key < $1.key }) {
            let parts = name.split(separator: "/").map(String.init)
            let path = EnvironmentPath(
                tenant: TenantSlug(rawValue: parts[0]), environment: EnvironmentName(rawValue: parts[1]))
            let numbers = try await store.catalog.revisions(of: path).map(\.number).sorted()
            #expect(numbers == Array(1..<(count + 1)), "revisions of \(name)")
            guard count > 0 else { continue }
            let exported = try fixture.export(of: path)
            #expect(try await store.catalog.revision(of: path).document == exported, "export of \(name)")
            // The tables, not only the stored revision, hold the exported document.
            let rendered = try await store.catalog.snapshot(of: path).document.rendered()
            #expect(
                try JSONParser.parse(rendered).value == (try JSONParser.parse(exported).value),
                "current document of \(name)")
        }

        let counts = try await store.read { db in
            try ["assignments", "assignment_events", "unlocks", "unlock_events"].reduce(into: [String: Int]()) {
                counts, table in
                counts[table] = try db.value(Int.self, "SELECT count(*) FROM \(table)")
            }
        }
        for (table, count) in manifest.counts {
            #expect(counts[table] == count, "rows of \(table)")
        }
        if manifest.counts.isEmpty { #expect(counts.values.allSatisfy { $0 == 0 }) }

        // Migration 0005's keys: every feature is found by its name in any canonically equivalent
        // spelling, and keeps the bytes it was written with.
        for (name, count) in manifest.revisions where count > 0 {
            let parts = name.split(separator: "/").map(String.init)
            let path = EnvironmentPath(
                tenant: TenantSlug(rawValue: parts[0]), environment: EnvironmentName(rawValue: parts[1]))
            for feature in try await store.catalog.snapshot(of: path).document.features {
                for spelling in [feature.name.decomposedForTest, feature.name.precomposedForTest] {
                    let found = try await store.catalog.feature(spelling, in: path).feature.name
                    #expect(
                        Array(found.utf8) == Array(feature.name.utf8),
                        "\(name): \(feature.name) as \(Array(spelling.utf8))")
                }
            }
        }
        // And its deltas sum, per feature and variation, to the users recorded there.
        #expect(try await store.read(Self.deltasDisagreeingWithAssignments).isEmpty)

        for (key, expected) in manifest.recordedVariations {
            let parts = key.split(separator: "/", maxSplits: 2).map(String.init)
            let path = EnvironmentPath(
                tenant: TenantSlug(rawValue: parts[0]), environment: EnvironmentName(rawValue: parts[1]))
            let recorded = try await store.recordedAssignments(of: parts[2], in: path)
            let byVariation = Dictionary(grouping: recorded.values, by: \.variation).mapValues(\.count)
            #expect(byVariation == expected, "recorded users of \(key)")
        }
    }
}
