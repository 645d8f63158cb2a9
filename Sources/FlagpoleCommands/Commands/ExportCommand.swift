import ArgumentParser
import FlagpoleCore
import FlagpolePublish
import FlagpoleServer
import FlagpoleStore
import Foundation

/// `flagpole export`: one environment's features.json, or with `--all` the whole CDN tree.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write an environment's features.json, or every environment's documents as a CDN upload tree.",
        discussion: """
            flagpole export --tenant SLUG [--env NAME] [--revision N] [--output FILE] [--compact]
            flagpole export --tenant SLUG [--env NAME] --user ID [--output FILE] [--compact]
            flagpole export --all --dir DIR
            With --user, the user's own document: every test carries test-variation-assignment (the user's \
            point, so a fresh install lands in the recorded group), every unlock flag the user's unlock state; \
            first assignments are recorded. Shared exports never carry test-variation-assignment.
            With --all, each environment's features.json, features.json.gz, configs.json and their \
            revisions/N/ copies, and a manifest.json, as `flagpole publish` puts them in a bucket.
            Two exports of the same revision are byte-identical. --output and --dir are written beside \
            and renamed into place, so readers never see half a file or half a tree.
            """)

    @Option(help: ArgumentHelp("The tenant's slug.", valueName: "slug"))
    var tenant: String?

    @Option(help: ArgumentHelp("The environment (default: production).", valueName: "name"))
    var env: String?

    @Option(help: ArgumentHelp("A past revision instead of the current one.", valueName: "n"))
    var revision: Int?

    @Option(help: ArgumentHelp("Write to this file instead of standard output.", valueName: "file"))
    var output: String?

    @Option(help: ArgumentHelp("Export this user's pinned document.", valueName: "id"))
    var user: String?

    @Flag(help: "No whitespace.")
    var compact = false

    @Flag(help: "Export every environment of every tenant (with --dir).")
    var all = false

    @Option(help: ArgumentHelp("The CDN tree's directory (with --all).", valueName: "dir"))
    var dir: String?

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        if all {
            guard dir != nil else { throw ValidationError("--all needs --dir DIR, the directory of the CDN tree.") }
            guard tenant == nil, env == nil, revision == nil, output == nil, !compact, user == nil else {
                throw ValidationError(
                    "--all exports every environment's current revision: don't combine it with --tenant, --env, --revision, --output, --compact or --user."
                )
            }
        } else {
            guard let tenant else {
                throw ValidationError("Name the tenant with --tenant SLUG, or export everything with --all --dir DIR.")
            }
            _ = try EnvironmentOptions.path(tenant: tenant, environment: environmentName)
            guard dir == nil else {
                throw ValidationError("--dir is for --all; use --output FILE for one environment.")
            }
            if let revision, revision < 1 { throw ValidationError("--revision counts from 1.") }
            if let user {
                _ = try UserOptions.id(user)
                guard revision == nil else {
                    throw ValidationError("--user exports the current revision; drop --revision.")
                }
            }
        }
    }

    func run() async throws {
        // A per-user export records the user's first assignments; every other export only reads.
        let store = try await database.openStore(user == nil ? .readOnly : .readWrite)
        if all {
            try await exportTree(store)
            return
        }
        let path = try EnvironmentOptions.path(tenant: tenant!, environment: environmentName)
        let (number, bytes) = try await document(of: path, in: store)
        if let output {
            do {
                try Data(bytes).write(to: URL(fileURLWithPath: Invocation.current.resolve(output)), options: .atomic)
            } catch {
                throw CommandFailure(
                    "Cannot write \(output): \(error.localizedDescription) Check that its folder exists and is writable."
                )
            }
            Console.error(
                "Wrote revision \(number) of \(path)\(user.map { " for user \($0)" } ?? "") to \(output) (\(bytes.count) bytes)."
            )
        } else {
            Console.out(bytes: bytes)
        }
    }

    /// The revision number and the bytes to write.
    private func document(of path: EnvironmentPath, in store: FeatureStore) async throws -> (Int, [UInt8]) {
        let style: JSONWriter.Style = compact ? .compact : .pretty
        if let user {
            let pinned = try await store.assignments.pinnedDocument(
                for: try UserOptions.id(user), in: path, style: style)
            return (pinned.revision, pinned.bytes)
        }
        let stored = try await store.catalog.revision(revision, of: path)
        return (stored.number, try stored.document(style))
    }

    private var environmentName: String {
        env ?? EnvironmentName.production.rawValue
    }

    private func exportTree(_ store: FeatureStore) async throws {
        let revisions = try await store.catalog.publishedRevisions()
        let directory = URL(fileURLWithPath: Invocation.current.resolve(dir!))
        let entries = try CDNTree(directory: directory).publish(revisions)
        let published = Set(revisions.map(\.path))
        for tenant in try await store.access.tenants() {
            for environment in tenant.environments {
                let path = EnvironmentPath(tenant: tenant.slug, environment: environment)
                if !published.contains(path) { Console.error("skipped \(path): no revision yet") }
            }
        }
        Console.out(
            "Published \(revisions.count) environment\(revisions.count == 1 ? "" : "s") (\(entries.count) files) to \(directory.path), with manifest.json."
        )
    }
}
