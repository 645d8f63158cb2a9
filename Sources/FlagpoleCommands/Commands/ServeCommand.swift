import ArgumentParser
import FlagpoleCore
import FlagpolePublish
import FlagpoleServer
import FlagpoleStore
import Hummingbird
import Logging
import Metrics
import Prometheus

/// `flagpole serve`: delivery, the admin API and metrics over HTTP, on the same SQLite file.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve features.json to apps and CDNs, and the admin API, over HTTP.",
        discussion: """
            Stops cleanly on SIGINT or SIGTERM, finishing the requests in flight. Writes by other \
            processes to the same database file (the command line) are served within --poll-interval.
            """)

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on; 0 picks a free one (printed on start).")
    var port = 8080

    @Option(help: ArgumentHelp("The largest request body accepted, in bytes.", valueName: "bytes"))
    var maxBodySize = 5 * 1024 * 1024

    @Option(
        help: ArgumentHelp("Cache-Control of shared documents, unless their environment sets one.", valueName: "value"))
    var cacheControl = ServerConfiguration.standardCacheControl

    @Option(help: ArgumentHelp("How often to look for other processes' writes, in milliseconds.", valueName: "ms"))
    var pollInterval = 250

    @Option(
        help: ArgumentHelp(
            "How often to do the scheduled work that is due (ramp steps), in milliseconds.", valueName: "ms"))
    var tickInterval = 15_000

    @OptionGroup(title: "Webhooks") var webhooks: WebhookOptions

    @Option(
        help: ArgumentHelp(
            "trace, debug, info (one line per request), notice, warning, error or critical.", valueName: "level"))
    var logLevel = "info"

    @Option(
        help: ArgumentHelp(
            "Users new to the store that one client without a key (an IPv4 address, an IPv6 /64) may have recorded through ?user=, per second on average; beyond it they get their document unrecorded.",
            valueName: "users"))
    var newUserRate = NewUserLimiter.Limit.standard.rate

    @Option(
        help: ArgumentHelp(
            "The most users new to the store one such client may have recorded at once.", valueName: "users"))
    var newUserBurst = NewUserLimiter.Limit.standard.burst

    @Flag(
        help:
            "Take the client's address from the last X-Forwarded-For entry, for the new-user limit: only behind a proxy that sets it."
    )
    var trustProxy = false

    @Option(
        help: ArgumentHelp(
            "The most attributes one user's request may carry (attr.NAME= parameters, OFREP's context); more is refused with 422.",
            valueName: "count"))
    var attributeKeys = UserAttributes.Limits.standard.keys

    @Option(
        help: ArgumentHelp(
            "The most bytes a user's attributes may take, as compact JSON; more is refused with 413.",
            valueName: "bytes"))
    var attributeBytes = UserAttributes.Limits.standard.bytes

    @Option(help: ArgumentHelp("Events older than this many days are refused as too old.", valueName: "days"))
    var eventMaxAgeDays = Int(EventPolicy.standard.maximumAge / EventPolicy.days)

    @Option(
        help: ArgumentHelp(
            "Raw events are deleted this many days after receipt (at least --event-max-age-days); results keep their figures.",
            valueName: "days"))
    var eventRetentionDays = Int(EventPolicy.standard.retention / EventPolicy.days)

    /// The event windows the options give.
    var eventPolicy: EventPolicy {
        EventPolicy(
            maximumAge: Double(eventMaxAgeDays) * EventPolicy.days, maximumSkew: EventPolicy.standard.maximumSkew,
            retention: Double(eventRetentionDays) * EventPolicy.days)
    }

    @Flag(help: "Load the example data first (as `flagpole demo` does) and print URLs to try, with a new admin key.")
    var demo = false

    @Option(
        help: ArgumentHelp(
            "Publish every environment to this bucket at start, then each new revision (see `flagpole publish --help` for the options it shares).",
            valueName: "s3-url"))
    var publishTo: String?

    @Option(
        help: ArgumentHelp("A private environment to publish too (tenant/env; repeatable).", valueName: "tenant/env"))
    var publishPrivate: [String] = []

    @Option(
        help: ArgumentHelp(
            "How long to wait after a change for more before publishing, in milliseconds.", valueName: "ms"))
    var publishDelay = 1000

    @OptionGroup(title: "Publishing (with --publish-to)") var publishing: PublishOptions

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        if let publishTo {
            do { _ = try S3Target(parsing: publishTo) } catch { throw ValidationError(error.description) }
        }
        guard publishDelay >= 0 else { throw ValidationError("--publish-delay must be 0 or more.") }
        _ = try PublishOptions.environments(publishPrivate, option: "--publish-private")
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError(
                "--log-level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be between 0 and 65535.") }
        guard maxBodySize > 0, pollInterval > 0, tickInterval > 0 else {
            throw ValidationError("--max-body-size, --poll-interval and --tick-interval must be positive.")
        }
        guard newUserRate >= 0, newUserRate.isFinite, newUserBurst >= 0 else {
            throw ValidationError(
                "--new-user-rate and --new-user-burst must be 0 (record no new user without a key) or more.")
        }
        guard attributeKeys >= 0, attributeBytes >= 2 else {
            throw ValidationError("--attribute-keys must be 0 or more, --attribute-bytes 2 (\"{}\") or more.")
        }
        if let problem = eventPolicy.problem {
            throw ValidationError("--event-max-age-days, --event-retention-days: \(problem).")
        }
    }

    func run() async throws {
        let store = try await database.openStore()
        let level = Logger.Level(rawValue: logLevel)!
        var logger = Logger(label: "flagpole")
        logger.logLevel = level
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))

        let tryThis: @Sendable (String) -> String
        if demo { tryThis = try await loadDemo(into: store) } else { tryThis = { _ in "" } }
        var configuration = ServerConfiguration(
            host: host, port: port, maxBodySize: maxBodySize, defaultCacheControl: cacheControl,
            pollInterval: .milliseconds(pollInterval), accessLogLevel: .info, newUsersPerSecond: newUserRate,
            newUserBurst: newUserBurst,
            trustsProxy: trustProxy, publishing: try publishingSettings(),
            attributeLimits: UserAttributes.Limits(keys: attributeKeys, bytes: attributeBytes))
        configuration.eventPolicy = eventPolicy
        configuration.tickInterval = .milliseconds(tickInterval)
        configuration.allowsPrivateWebhooks = webhooks.allowPrivateWebhooks
        configuration.publicURL = webhooks.publicURL
        configuration.deliveriesKept = webhooks.deliveriesKept
        configuration.countsInterval = min(.milliseconds(tickInterval), configuration.countsInterval)
        configuration.clock = Invocation.current.clock
        let databasePath = try database.address.description
        let application = ServerApplication.make(
            store: store, configuration: configuration, registry: registry, logger: logger
        ) { port in
            let base = "http://\(host):\(port)"
            Console.out("Listening on \(base) (database \(databasePath)). Stop with Ctrl-C.")
            let text = tryThis(base)
            if !text.isEmpty { Console.out(text) }
        }
        try await application.runService()
    }

    private func publishingSettings() throws -> ServerPublishing? {
        guard let publishTo else { return nil }
        return ServerPublishing(
            settings: try publishing.settings(to: try S3Target(parsing: publishTo)),
            scope: PublishScope(
                includePrivate: Set(try PublishOptions.environments(publishPrivate, option: "--publish-private"))),
            delay: .milliseconds(publishDelay))
    }

    /// Loads the example data and makes an admin key; returns the text to print once the port is known.
    private func loadDemo(into store: FeatureStore) async throws -> @Sendable (String) -> String {
        let path = EnvironmentPath(tenant: TenantSlug(rawValue: "demo"), environment: .production)
        _ = try await DemoCommand.importExample(into: store, path: path)
        let (_, variations) = try await DemoCommand.recordUsers(in: store, path: path)
        try await DemoCommand.recordResults(into: store, path: path, variations: variations)
        // The same data in a private environment, which takes a key.
        let staging = EnvironmentPath(tenant: path.tenant, environment: EnvironmentName(rawValue: "staging"))
        _ = try await DemoCommand.importExample(into: store, path: staging)
        try await store.access.updateDelivery(of: staging) { $0.isPrivate = true }
        let key = try await store.access.createKey(for: .tenant(path.tenant), role: .admin, name: "serve --demo").secret
        // A person too, who signs in as themselves once the link has set their password; on a
        // second run, a new link until they have.
        let invitation: MemberLink?
        do {
            invitation = try await store.access.addMember(
                "demo@example.com", name: "Demo Admin", role: .admin, to: path.tenant, by: "cli:serve --demo")
        } catch MemberError.alreadyMember {
            let hasPassword =
                try await store.access.members(of: path.tenant).first { $0.email == "demo@example.com" }?.hasPassword
                ?? false
            invitation =
                hasPassword
                ? nil
                : try await store.access.invitation(for: "demo@example.com", in: path.tenant, by: "cli:serve --demo")
        }
        return { base in
            """

            Dashboard: open \(base)/ and sign in with the key \(key)
            Or as a person: open \(invitation.map { $0.url(server: base) } ?? "\(base)/login") to set Demo Admin's password (demo@example.com).

            Try:
              curl -i \(base)/t/demo/production/features.json
              curl -i '\(base)/t/demo/production/features.json?user=demo-user-7'
              curl -i '\(base)/t/demo/production/configs.json?user=demo-user-7'
              curl -d '{"context": {"targetingKey": "demo-user-7"}}' \(base)/t/demo/production/ofrep/v1/evaluate/flags
              curl -N \(base)/t/demo/production/changes
              curl -H 'Authorization: Bearer \(key)' \(base)/api/v1/tenants/demo/environments/production/features
              curl -H 'Authorization: Bearer \(key)' -d '{"biases": [20, 80], "dryRun": true}' \\
                   '\(base)/api/v1/tenants/demo/environments/production/features/New%20Onboarding/biases'
              curl \(base)/metrics
            The admin key above was made for this run (tenant demo); `flagpole key list --tenant demo` shows its prefix.
            """
        }
    }
}
