import ArgumentParser
import FlagpoleCore
import FlagpoleStore
import Foundation
import Synchronization

/// `flagpole demo`: the main job end to end on example data.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract:
            "Import an example features.json into a demo tenant and show the report, the features, the export and a phased roll-out plan.",
        discussion:
            "Safe to run again: the second import finds nothing new and creates no revision, the users are already recorded, and the roll-out is only planned."
    )

    @Option(help: ArgumentHelp("The tenant to create or reuse.", valueName: "slug"))
    var tenant: String = "demo"

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        _ = try TenantOptions.slug(tenant)
    }

    func run() async throws {
        let path = try EnvironmentOptions.path(tenant: tenant, environment: EnvironmentName.production.rawValue)
        let file = "example-features.json"
        let bytes = PackageResources.example_features_json
        let store = try await database.openStore()

        section("1. Validate \(file) as the app reads it")
        let decoded = DocumentDecoder.decode(bytes)
        let report = DiagnosticReport(file: file, diagnostics: decoded.diagnostics)
        for line in report.lines { Console.out(line) }
        Console.out("\(file): \(decoded.isValid ? "valid" : "invalid"), \(report.summary)")

        section("2. Import it into \(path) in \(try database.address)")
        let outcome = try await Self.importExample(into: store, path: path)
        Console.out(ImportSummary(outcome: outcome, file: file).text)

        section("3. The features, with the biases the app actually uses")
        Console.out(FeatureListing(document: try await store.catalog.snapshot(of: path).document).text)

        section("4. The export, ready for CDN upload")
        Console.out(bytes: try await store.catalog.revision(of: path).document)

        section("5. Typed configs, as SwiftFeatureConfigs apps load them: configs.json for everyone")
        Console.out(bytes: try await store.catalog.sharedConfigs(in: path).bytes)

        section(
            "6. A phased roll-out of \"\(Self.rollout)\": \(Self.demoUsers.count) users recorded, then 10 % → 20 % planned"
        )
        let (assigned, variations) = try await Self.recordUsers(in: store, path: path)
        Console.out("\(assigned.recorded) users recorded now, \(assigned.known) already recorded.")
        let plan = try await store.catalog.setBiases(
            [20, 80], of: Self.rollout, in: path, options: EditOptions(isDryRun: true, actor: Invocation.current.actor))
        Console.out(EditReport(outcome: plan, isDryRun: true).lines.joined(separator: "\n"))

        section("7. Results of \"\(Self.rollout)\": exposures and sign-ups the demo's app reported")
        try await Self.recordResults(into: store, path: path, variations: variations)
        Console.out(
            ResultsText.render(try await store.experiments.results(of: Self.rollout, in: path, goal: Self.goal.name)))

        section("Next")
        Console.out(
            """
            flagpole bias set "\(Self.rollout)" 20 80 --tenant \(path.tenant)
            flagpole assignments --tenant \(path.tenant) --limit 10
            flagpole results "\(Self.rollout)" --tenant \(path.tenant)   # docs/RESULTS.md
            flagpole export --tenant \(path.tenant) --user demo-user-7
            flagpole config export --tenant \(path.tenant) --format dictionary --user demo-user-7
            flagpole evaluate --tenant \(path.tenant) --user demo-user-7 --attr country=DE
            flagpole rule set "Example A/B Test" --file rules.json --dry-run --tenant \(path.tenant)   # docs/TARGETING.md
            flagpole feature list --tenant \(path.tenant)
            flagpole revisions --tenant \(path.tenant)
            flagpole export --all --dir ./cdn
            flagpole validate your-features.json
            """)
    }

    /// Creates the tenant (and the environment) if needed and imports the example file and its
    /// configs: a no-op the second time.
    static func importExample(into store: FeatureStore, path: EnvironmentPath) async throws -> ImportOutcome {
        if try await !store.access.tenants().contains(where: { $0.slug == path.tenant }) {
            try await store.access.createTenant(path.tenant, name: "Demo App")
        }
        if try await !store.access.environments(of: path.tenant).contains(where: { $0.path == path }) {
            try await store.access.createEnvironment(path)
        }
        let outcome = try await store.catalog.importDocument(
            PackageResources.example_features_json, into: path,
            options: ImportOptions(message: "demo import", actor: Invocation.current.actor))
        let (configs, _) = try ConfigsDecoder.decode(PackageResources.example_configs_json)
        _ = try await store.catalog.importConfigs(
            configs, in: path, options: EditOptions(message: "demo configs", actor: Invocation.current.actor))
        return outcome
    }

    /// The goal the demo's results are about.
    static let goal = Goal(name: "signup", kind: .conversion)

    /// Records the demo's users in the roll-out; returns how many were new, and each one's
    /// variation, in the order of `demoUsers` (the order `assign` reports them in).
    static func recordUsers(in store: FeatureStore, path: EnvironmentPath) async throws -> (AssignmentSummary, [String])
    {
        let variations = Mutex<[String]>([])
        let summary = try await store.assignments.assign(demoUsers, to: rollout, in: path) { assignment in
            variations.withLock { $0.append(assignment.variation) }
        }
        return (summary, variations.withLock { $0 })
    }

    /// What the demo's app would have reported (its users' `variations` as `recordUsers` records them): each demo user exposed to the roll-out, and a
    /// sign-up from 20 % of the old onboarding's users and 30 % of the new one's (a fixed
    /// draw from each user's rank in their variation, so every run sends the same events). The margin is one the
    /// always-valid interval tells from no difference at 10 000 users, so the readout has a clear
    /// verdict. Event ids are fixed too: a second run's events are duplicates and change nothing.
    /// A few users then fetch their groups with attributes, as apps would, for the user page.
    static func recordResults(
        into store: FeatureStore, path: EnvironmentPath, variations: [String]
    ) async throws {
        if try await !store.experiments.goals(in: path).contains(where: { $0.name == goal.name }) {
            try await store.experiments.createGoal(goal, in: path)
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var events: [ReceivedEvent] = []
        var seen: [String: Int] = [:]
        // The groups the assignment recorded: one write for all of them, not a read per user.
        for (index, (user, variation)) in zip(demoUsers, variations).enumerated() {
            events.append(
                ReceivedEvent(
                    id: "demo-exposure-\(index)", user: user, goal: Goal.exposure, feature: rollout, time: now,
                    receivedAt: now))
            // Drawn by the user's rank within their variation, an even spread over 0..<1000, so
            // each variation's rate is its target whichever users the feature's salt put in it.
            let rank = seen[variation, default: 0]
            seen[variation] = rank + 1
            let draw = (UInt64(rank) &* 2_654_435_761) % 1_000
            if draw < (variation == "Enabled" ? 300 : 200) {
                events.append(
                    ReceivedEvent(
                        id: "demo-signup-\(index)", user: user, goal: goal.name, time: now + 1_000, receivedAt: now))
            }
        }
        for start in stride(from: 0, to: events.count, by: Experiments.eventsPerBatch) {
            let batch = events[start..<min(start + Experiments.eventsPerBatch, events.count)]
            _ = try await store.experiments.record(batch.enumerated().map { ($0.offset, $0.element) }, in: path)
        }
        for (index, user) in demoUsers.prefix(attributedUsers).enumerated() {
            let attributes: [String: AttributeValue] = [
                "country": .string(["DE", "FR", "US", "JP", "BR"][index % 5]),
                "appVersion": .string(index % 2 == 0 ? "3.2.0" : "3.1.4"), "beta": .bool(index % 3 == 0),
            ]
            _ = try await store.assignments.userGroups(
                of: user, in: path, for: .follower, attributes: try UserAttributes(attributes))
        }
    }

    /// Demo users whose apps send attributes (country, app version, beta) with their fetches.
    static let attributedUsers = 10

    /// The example file's on/off A/B test, at 10 % for the new onboarding.
    static let rollout = "New Onboarding"
    static let demoUsers = (1...10_000).map { UserID(rawValue: "demo-user-\($0)") }

    private func section(_ title: String) {
        Console.out("\n== \(title)\n")
    }
}
