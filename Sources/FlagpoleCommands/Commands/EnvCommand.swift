import ArgumentParser
import FlagpoleCore
import FlagpoleStore

/// `flagpole env create|list|mark|access`.
struct EnvCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "env",
        abstract: "Create, list and mark a tenant's environments (each one is one features.json).",
        subcommands: [Create.self, List.self, Mark.self, Access.self])

    /// Who may fetch an environment's documents.
    enum Visibility: String, EnumerableFlag {
        case `private`, `public`

        static func help(for value: Self) -> ArgumentHelp? {
            switch value {
            case .private: "Its documents, OFREP and Bucketeer calls need a key of the tenant (a delivery key)."
            case .public: "Anyone may fetch its documents (the default for a new environment)."
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an environment.")

        @Argument(help: ArgumentHelp("The environment's name, such as staging.", valueName: "name"))
        var name: String

        @Flag var visibility: Visibility = .public

        @OptionGroup var tenant: TenantOptions
        @OptionGroup var database: DatabaseOptions

        func validate() throws {
            _ = try EnvironmentOptions.path(tenant: tenant.tenant, environment: name)
        }

        func run() async throws {
            let path = try EnvironmentOptions.path(tenant: tenant.tenant, environment: name)
            try await database.openStore().access.createEnvironment(
                path, delivery: DeliverySettings(isPrivate: visibility == .private))
            Console.out(
                "Created \(visibility.rawValue) environment \(path). Import its features with `flagpole import FILE --tenant \(path.tenant) --env \(path.environment)`."
            )
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a tenant's environments.")

        @OptionGroup var tenant: TenantOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let store = try await database.openStore(.readOnly)
            let slug = try tenant.slug()
            let environments = try await store.access.environments(of: slug)
            // What a server refused lately, so that an app sending a wrong key is seen here.
            let refused = try await store.outbound.refusedEventBatches(
                of: slug, since: Invocation.current.clock.now.addingTimeInterval(-24 * 3600))
            if output.json {
                Console.json(
                    .array(
                        environments.map { environment in
                            guard case .object(var object) = environment.jsonValue else { return environment.jsonValue }
                            object.append(
                                "refusedEventBatches", (refused[environment.path.environment] ?? .init()).jsonValue)
                            return .object(object)
                        }))
                return
            }
            var table = TextTable("NAME", "REVISION", "FEATURES", "ACCESS", "COLOUR", "REASON", "CREATED")
            for environment in environments {
                table.append(
                    environment.path.environment.rawValue, environment.revision.map(String.init) ?? "-",
                    String(environment.featureCount), environment.delivery.isPrivate ? "private" : "public",
                    environment.marking.colour?.rawValue ?? "-",
                    environment.marking.requiresReason ? "required" : "-", environment.createdAt.iso8601)
            }
            Console.out(table.text)
            for environment in environments {
                if let summary = refused[environment.path.environment]?.summary(span: "the last 24 h") {
                    Console.out(
                        "\(environment.path.environment): \(summary). Those apps' events are lost; docs/BUCKETEER.md says how to fix each."
                    )
                }
            }
        }
    }

    /// `flagpole env mark NAME --colour '#c0392b' --requires-reason`: how the dashboard shows the
    /// environment, so that nobody takes it for another.
    struct Mark: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set an environment's colour and whether changes there need a reason.",
            discussion: "Options left out keep their value. The dashboard shows the colour in every page's header.")

        @Argument(help: ArgumentHelp("The environment's name, such as production.", valueName: "name"))
        var name: String

        @Option(
            help: ArgumentHelp(
                "The colour the dashboard shows it in: # and six hexadecimal digits.", valueName: "#rrggbb"))
        var colour: String?

        @Flag(help: "Remove the colour.")
        var noColour = false

        @Flag(inversion: .prefixedNo, help: "Whether changes here need a reason (production, typically).")
        var requiresReason: Bool?

        @OptionGroup var tenant: TenantOptions
        @OptionGroup var database: DatabaseOptions

        func validate() throws {
            _ = try EnvironmentOptions.path(tenant: tenant.tenant, environment: name)
            if colour != nil && noColour { throw ValidationError("Give --colour or --no-colour, not both.") }
            if let colour {
                do {
                    _ = try EnvironmentColour(validating: colour)
                } catch {
                    throw ValidationError("--colour: \(error.description)")
                }
            }
            if colour == nil && !noColour && requiresReason == nil {
                throw ValidationError(
                    "Nothing to change: give --colour, --no-colour, --requires-reason or --no-requires-reason.")
            }
        }

        func run() async throws {
            let path = try EnvironmentOptions.path(tenant: tenant.tenant, environment: name)
            let colour: EnvironmentColour?? =
                noColour ? .some(nil) : try colour.map { try EnvironmentColour(validating: $0) }
            let requiresReason = requiresReason
            let marking = try await database.openStore().access.updateMarking(of: path) { marking in
                if let colour { marking.colour = colour }
                if let requiresReason { marking.requiresReason = requiresReason }
            }
            Console.out(
                "Environment \(path): colour \(marking.colour?.rawValue ?? "none"), "
                    + (marking.requiresReason ? "changes need a reason." : "changes need no reason."))
        }
    }

    /// `flagpole env access NAME --private`: who may fetch the environment's documents, as the
    /// API's `PATCH {"private": true}` sets it.
    struct Access: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make an environment private (its documents need a key) or public.",
            discussion:
                "Takes effect at the next request to a server on the same database. A private environment's Cache-Control may not be public."
        )

        @Argument(help: ArgumentHelp("The environment's name, such as staging.", valueName: "name"))
        var name: String

        @Flag var visibility: Visibility

        @OptionGroup var tenant: TenantOptions
        @OptionGroup var database: DatabaseOptions

        func validate() throws {
            _ = try EnvironmentOptions.path(tenant: tenant.tenant, environment: name)
        }

        func run() async throws {
            let path = try EnvironmentOptions.path(tenant: tenant.tenant, environment: name)
            let isPrivate = visibility == .private
            _ = try await database.openStore().access.updateDelivery(of: path) { $0.isPrivate = isPrivate }
            Console.out(
                isPrivate
                    ? "Environment \(path) is private: its documents, OFREP and Bucketeer calls need a key of the tenant (`flagpole key create --tenant \(path.tenant) --role delivery`)."
                    : "Environment \(path) is public: anyone may fetch its documents.")
        }
    }
}
