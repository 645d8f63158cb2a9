import ArgumentParser
import FlagpoleCore
import FlagpoleStore
import Foundation

/// `flagpole member add|list|role|remove|invite|reset`: the people of a tenant. (`user` means
/// an app's end users, as in `flagpole user forget`.)
struct MemberCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "member",
        abstract: "Manage the people who sign in to the dashboard, and their role in each tenant.",
        subcommands: [Add.self, List.self, Role.self, Remove.self, Invite.self, Reset.self])

    /// Where the links lead: the address people reach `flagpole serve` at.
    struct LinkOptions: ParsableArguments {
        @Option(
            help: ArgumentHelp(
                "The address people open the dashboard at; the link is this and /welcome?token=… (default: $FLAGPOLE_URL, else http://localhost:8080).",
                valueName: "url"))
        var url: String?

        var server: String { ServerURL.base(url) }

        /// Prints the link on its own line, which only its member should see.
        func print(_ link: MemberLink, json: Bool) {
            if json {
                Console.json(link.jsonValue(server: server))
                return
            }
            Console.out(link.url(server: server))
            Console.error(
                "Give this link to \(link.email) yourself (Flagpole sends no mail). It sets their password, works once, and expires \(link.expiresAt.iso8601)."
            )
        }
    }

    static func role(_ text: String) throws -> KeyRole {
        do {
            return try KeyRole(member: text)
        } catch {
            throw ValidationError("Pass --role admin, editor or reader.")
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Add someone to a tenant. Someone new gets an invitation link that sets their password; someone with one is only added."
        )

        @Argument(help: ArgumentHelp("Their e-mail address, which they sign in with.", valueName: "email"))
        var email: String

        @Option(help: "Their name, as revisions will show it.")
        var name: String

        @Option(help: ArgumentHelp("admin, editor or reader.", valueName: "role"))
        var role: String

        @OptionGroup var tenant: TenantOptions
        @OptionGroup var link: LinkOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func validate() throws { _ = try MemberCommand.role(role) }

        func run() async throws {
            let invitation = try await database.openStore().access.addMember(
                email, name: name, role: try MemberCommand.role(role), to: try tenant.slug(),
                by: Invocation.current.actor)
            if let invitation {
                link.print(invitation, json: output.json)
            } else if output.json {
                Console.json(["email": .string(email.lowercased()), "url": .null])
            } else {
                Console.out("Added \(email.lowercased()) to \(try tenant.slug()); they sign in with their password.")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a tenant's members and their roles.")

        @OptionGroup var tenant: TenantOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let members = try await database.openStore(.readOnly).access.members(of: try tenant.slug())
            if output.json {
                Console.json(.array(members.map(\.jsonValue)))
                return
            }
            guard !members.isEmpty else {
                Console.out("No members yet. Add one with `flagpole member add EMAIL --name NAME --role admin`.")
                return
            }
            var table = TextTable("EMAIL", "NAME", "ROLE", "JOINED", "STATE")
            for member in members {
                let state =
                    member.hasPassword
                    ? "active" : member.invitedUntil.map { "invited until \($0.iso8601)" } ?? "invitation expired"
                table.append(member.email, member.name, member.role.rawValue, member.joinedAt.iso8601, state)
            }
            Console.out(table.text)
        }
    }

    struct Role: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a member's role; it takes effect at once, in open sessions too.")

        @Argument(help: ArgumentHelp("The member's e-mail address.", valueName: "email"))
        var email: String

        @Option(help: ArgumentHelp("admin, editor or reader.", valueName: "role"))
        var role: String

        @OptionGroup var tenant: TenantOptions
        @OptionGroup var database: DatabaseOptions

        func validate() throws { _ = try MemberCommand.role(role) }

        func run() async throws {
            let member = try await database.openStore().access.setRole(
                try MemberCommand.role(role), of: email, in: try tenant.slug())
            Console.out("\(member.email) is now \(member.role.rawValue) in \(try tenant.slug()).")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove someone from a tenant: their sessions end and their keys there are revoked, at once.")

        @Argument(help: ArgumentHelp("The member's e-mail address.", valueName: "email"))
        var email: String

        @OptionGroup var tenant: TenantOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            try await database.openStore().access.removeMember(email, from: try tenant.slug())
            Console.out(
                "Removed \(email.lowercased()) from \(try tenant.slug()): their sessions ended and their keys there are revoked."
            )
        }
    }

    struct Invite: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "A new invitation link for a member who has not set a password yet; the earlier one stops working.")

        @Argument(help: ArgumentHelp("The member's e-mail address.", valueName: "email"))
        var email: String

        @OptionGroup var tenant: TenantOptions
        @OptionGroup var link: LinkOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let invitation = try await database.openStore().access.invitation(
                for: email, in: try tenant.slug(), by: Invocation.current.actor)
            link.print(invitation, json: output.json)
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "A link that sets a new password, for a server operator to hand over; it ends the member's sessions when used."
        )

        @Argument(help: ArgumentHelp("The member's e-mail address.", valueName: "email"))
        var email: String

        @OptionGroup var link: LinkOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            link.print(
                try await database.openStore().access.resetLink(for: email, by: Invocation.current.actor),
                json: output.json)
        }
    }
}
