import ArgumentParser
import FlagpoleCore
import FlagpoleStore

/// `flagpole env create|list`.
struct EnvCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "env",
        abstract: "Create and list a tenant's environments (each one is one features.json).",
        subcommands: [Create.self, List.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an environment.")

        @Argument(help: ArgumentHelp("The environment's name, such as staging.", valueName: "name"))
        var name: String

        @OptionGroup var tenant: TenantOptions
        @OptionGroup var database: DatabaseOptions

        func validate() throws {
            _ = try EnvironmentOptions.path(tenant: tenant.tenant, environment: name)
        }

        func run() async throws {
            let path = try EnvironmentOptions.path(tenant: tenant.tenant, environment: name)
            try await database.openStore().createEnvironment(path)
            Console.out(
                "Created environment \(path). Import its features with `flagpole import FILE --tenant \(path.tenant) --env \(path.environment)`."
            )
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a tenant's environments.")

        @OptionGroup var tenant: TenantOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let environments = try await database.openStore(.readOnly).environments(of: try tenant.slug())
            if output.json {
                Console.json(.array(environments.map(\.jsonValue)))
                return
            }
            var table = TextTable("NAME", "REVISION", "FEATURES", "CREATED")
            for environment in environments {
                table.append(
                    environment.path.environment.rawValue, environment.revision.map(String.init) ?? "-",
                    String(environment.featureCount), environment.createdAt.iso8601)
            }
            Console.out(table.text)
        }
    }
}
