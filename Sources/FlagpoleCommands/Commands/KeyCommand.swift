import ArgumentParser
import FlagpoleCore
import FlagpoleStore

/// `flagpole key create|list|revoke`.
struct KeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Manage the API keys of `flagpole serve` (only their SHA-256 is stored).",
        subcommands: [Create.self, List.self, Revoke.self])

    /// `--tenant SLUG` or `--server-admin`: whose keys.
    struct OwnerOptions: ParsableArguments {
        @Option(help: ArgumentHelp("The tenant whose key it is.", valueName: "slug"))
        var tenant: String?

        @Flag(help: "A server-wide admin key, which creates tenants and acts as admin in every one.")
        var serverAdmin = false

        func validate() throws {
            guard (tenant == nil) != !serverAdmin else {
                throw ValidationError("Pass exactly one of --tenant SLUG and --server-admin.")
            }
            _ = try tenant.map(TenantOptions.slug)
        }

        func owner() throws -> KeyOwner {
            try tenant.map { .tenant(try TenantOptions.slug($0)) } ?? .server
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a key and print it once: keep it, it cannot be shown again.")

        @OptionGroup var owner: OwnerOptions

        @Option(help: ArgumentHelp("admin, editor, reader or delivery (tenant keys).", valueName: "role"))
        var role: String?

        @Option(
            help:
                "A name to recognise the key by, such as \"ci\"; histories name its changes so (default: its role and who made it)."
        )
        var name = ""

        @Option(
            help: ArgumentHelp(
                "The member whose key it is (their role caps it; it is revoked when they leave the tenant).",
                valueName: "email"))
        var member: String?

        @Flag(help: "A service's key (the default), known by --name in every revision it makes.")
        var service = false

        @Option(
            help: ArgumentHelp(
                "Scope a delivery key to one environment: an OpenFeature provider given only the host then reads this environment.",
                valueName: "name"))
        var env: String?

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func validate() throws {
            if owner.serverAdmin {
                guard role == nil || role == KeyRole.serverAdmin.rawValue else {
                    throw ValidationError("A --server-admin key has no other role; drop --role.")
                }
            } else {
                if service && member != nil {
                    throw ValidationError("A key is a --service's or a --member's, not both.")
                }
                guard let role, let parsed = KeyRole(rawValue: role), parsed != .serverAdmin else {
                    throw ValidationError("Pass --role admin, editor, reader or delivery.")
                }
                if let env {
                    guard parsed == .delivery else {
                        throw ValidationError("Only a delivery key is scoped to one environment: pass --role delivery.")
                    }
                    _ = try EnvironmentOptions.path(tenant: owner.tenant ?? "", environment: env)
                }
            }
        }

        func run() async throws {
            let keyOwner = try owner.owner()
            let keyRole = keyOwner == .server ? KeyRole.serverAdmin : KeyRole(rawValue: role ?? "")!
            // Every key has a name: the histories of what it changes show it rather than its prefix.
            let label = name.isEmpty ? "\(keyRole.rawValue) key made by \(Invocation.current.actor)" : name
            let created = try await database.openStore().access.createKey(
                for: keyOwner, role: keyRole, name: member != nil && name.isEmpty ? "" : label,
                environment: env.map(EnvironmentName.init(rawValue:)), member: member)
            if output.json {
                var object = created.info.jsonObject
                object.append("key", .string(created.secret))
                Console.json(.object(object))
            } else {
                Console.out(created.secret)
                Console.error(
                    "Made \(keyRole == .admin || keyRole == .editor ? "an" : "a") \(keyRole.rawValue) key (prefix \(created.info.prefix)). Keep it now: only its hash is stored."
                )
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List keys by prefix, role and state; never their secrets.")

        @OptionGroup var owner: OwnerOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let keys = try await database.openStore(.readOnly).access.keys(of: try owner.owner())
            if output.json {
                Console.json(.array(keys.map(\.jsonValue)))
                return
            }
            guard !keys.isEmpty else {
                Console.out("No keys yet. Make one with `flagpole key create`.")
                return
            }
            var table = TextTable("PREFIX", "ROLE", "OWNER", "NAME", "CREATED", "LAST USED", "REVOKED")
            for key in keys {
                table.append(
                    key.prefix, key.role.rawValue, key.member ?? "service", key.name, key.createdAt.iso8601,
                    key.lastUsedAt?.iso8601 ?? "-", key.revokedAt?.iso8601 ?? "-")
            }
            Console.out(table.text)
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a key: it stops working at once, on running servers too.")

        @Argument(help: ArgumentHelp("The key's prefix, as `flagpole key list` shows it.", valueName: "prefix"))
        var prefix: String

        @OptionGroup var owner: OwnerOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let key = try await database.openStore().access.revokeKey(prefix, of: try owner.owner())
            Console.out("Revoked key \(key.prefix) (\(key.role.rawValue)).")
        }
    }
}
