import ArgumentParser
import FlagpoleCore
import FlagpolePublish
import FlagpoleStore
import Foundation

/// `flagpole publish`: every environment's documents to an S3-compatible bucket, and the publish log.
struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish features.json and configs.json to S3-compatible object storage, or show what was published.",
        subcommands: [Run.self, Status.self],
        defaultSubcommand: Run.self)

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "run",
            abstract: "Publish the current revision of each environment to a bucket (the default subcommand).",
            discussion: """
                flagpole publish --to s3://BUCKET[/PREFIX] [--endpoint URL] [--region R] [--tenant T [--env E]] \
                [--include-private T/E] [--dry-run] [--json]
                Writes each environment's revisions/N/ copies (immutable), then features.json, features.json.gz and \
                configs.json, then manifest.json last. Objects the bucket already holds (by the manifest's SHA-256) \
                are not sent again. A failed run writes no manifest, says which objects it wrote, and exits 1; \
                the next run completes it. Credentials are read as the AWS command line reads them \
                (AWS_ACCESS_KEY_ID…, AWS_PROFILE, ~/.aws/credentials). See docs/PUBLISHING.md.
                """)

        @Option(help: ArgumentHelp("The bucket and prefix: s3://BUCKET[/PREFIX].", valueName: "s3-url"))
        var to: String

        @Option(help: ArgumentHelp("Only this tenant's environments.", valueName: "slug"))
        var tenant: String?

        @Option(help: ArgumentHelp("Only this environment of --tenant.", valueName: "name"))
        var env: String?

        @Option(
            help: ArgumentHelp(
                "Publish this private environment too (tenant/env; repeatable). Private ones are otherwise skipped.",
                valueName: "tenant/env"))
        var includePrivate: [String] = []

        @Flag(help: "Say what would be uploaded and why; write nothing.")
        var dryRun = false

        @Flag(help: "Print the report as JSON.")
        var json = false

        @OptionGroup var publishing: PublishOptions
        @OptionGroup var database: DatabaseOptions

        func validate() throws {
            _ = try target()
            _ = try scope()
            if env != nil, tenant == nil { throw ValidationError("--env goes with --tenant.") }
        }

        private func target() throws -> S3Target {
            do { return try S3Target(parsing: to) } catch { throw ValidationError(error.description) }
        }

        private func scope() throws -> PublishScope {
            let included = try PublishOptions.environments(includePrivate, option: "--include-private")
            return PublishScope(
                tenant: try tenant.map(TenantOptions.slug),
                environment: try env.map { name in
                    do { return try EnvironmentName(validating: name) } catch { throw ValidationError("\(error)") }
                },
                includePrivate: Set(included))
        }

        func run() async throws {
            // A dry run writes nothing, not even to the publish log.
            let store = try await database.openStore(dryRun ? .readOnly : .readWrite)
            let scope = try scope()
            if let tenant = scope.tenant, let environment = scope.environment {
                // A named environment that doesn't exist, or is private and not included, is an error, not a no-op.
                let path = EnvironmentPath(tenant: tenant, environment: environment)
                let state = try await store.access.deliveryState(of: path)
                if state.settings.isPrivate, !scope.includePrivate.contains(path) {
                    throw CommandFailure(
                        "\(path) is private: publish it with --include-private \(path), behind a CDN that checks a key (docs/PUBLISHING.md)."
                    )
                }
            }
            let settings = try publishing.settings(to: try target())
            let publisher = Publisher(settings: settings)
            // The same lease as the servers': on PostgreSQL, never two publishes to one target at once.
            let report = try await store.withLease("publish \(settings.target)") {
                await publisher.publish(
                    from: store, scope: scope, dryRun: dryRun, environment: Invocation.current.environment)
            }
            try? await publisher.shutdown()
            if json {
                Console.json(PublishOutput.json(of: report))
            } else {
                PublishOutput.print(report)
            }
            if report.error != nil { throw ExitCode.failure }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show each bucket's last published revision per environment, and whether it is behind or failing."
        )

        @Option(help: ArgumentHelp("Only this target: s3://BUCKET[/PREFIX].", valueName: "s3-url"))
        var to: String?

        @Flag(help: "Print as JSON.")
        var json = false

        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let target = try to.map { text throws(ValidationError) in
                do throws(PublishError) {
                    return try S3Target(parsing: text).description
                } catch { throw ValidationError(error.description) }
            }
            let statuses = try await database.openStore(.readOnly).outbound.publishStatus(target: target)
            if json {
                Console.json(.array(statuses.map(PublishOutput.json(of:))))
                return
            }
            guard !statuses.isEmpty else {
                Console.out(
                    "Nothing published\(target.map { " to \($0)" } ?? "") yet. Publish with `flagpole publish --to s3://BUCKET`."
                )
                return
            }
            PublishOutput.print(statuses)
        }
    }
}
