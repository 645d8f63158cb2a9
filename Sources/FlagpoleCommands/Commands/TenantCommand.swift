import ArgumentParser
import FlagpoleCore
import FlagpoleStore

/// `flagpole tenant create|list`.
struct TenantCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tenant",
        abstract: "Create and list tenants (a customer or an app family).",
        subcommands: [Create.self, List.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a tenant, with its production environment.")

        @Argument(help: ArgumentHelp("Lowercase letters, digits and hyphens, as in URLs.", valueName: "slug"))
        var slug: String

        @Option(help: "A display name (default: the slug).")
        var name: String?

        @OptionGroup var database: DatabaseOptions

        func validate() throws {
            _ = try TenantOptions.slug(slug)
        }

        func run() async throws {
            let tenant = try await database.openStore().access.createTenant(TenantSlug(rawValue: slug), name: name)
            Console.out("Created tenant \(tenant.slug) with environment production.")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tenants.")

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let tenants = try await database.openStore(.readOnly).access.tenants()
            if output.json {
                Console.json(.array(tenants.map(\.jsonValue)))
                return
            }
            guard !tenants.isEmpty else {
                Console.out("No tenants yet. Create one with `flagpole tenant create SLUG`.")
                return
            }
            var table = TextTable("SLUG", "NAME", "CREATED", "ENVIRONMENTS")
            for tenant in tenants {
                table.append(
                    tenant.slug.rawValue, tenant.name, tenant.createdAt.iso8601,
                    tenant.environments.map(\.rawValue).joined(separator: ", "))
            }
            Console.out(table.text)
        }
    }
}
