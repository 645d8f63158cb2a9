import ArgumentParser
import FlagpoleCore
import FlagpoleStore

/// `flagpole user forget ID --tenant T`.
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user",
        abstract: "What the store keeps of one user.",
        subcommands: [Forget.self])

    /// `flagpole user forget ID --tenant T`: a data-protection request.
    struct Forget: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "forget",
            abstract: "Delete everything recorded of a user in every environment of a tenant, in one transaction.",
            discussion: """
                Deletes the user's attributes, groups, QA overrides, unlock states and the history of all of them. \
                An anonymous note says that a user was forgotten, by whom and when, never whom. Segments whose list \
                names the user are listed: remove the id from them with `flagpole segment set`.
                """)

        @Argument(help: "The user's id.")
        var id: String

        @OptionGroup var tenant: TenantOptions
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let user = try UserOptions.id(id)
            let report = try await database.openStore().assignments.forget(
                user, in: try tenant.slug(), actor: Invocation.current.actor)
            if output.json {
                Console.json(report.jsonValue)
                return
            }
            Console.out(
                """
                Forgot \(user) in \(report.tenant): \(report.assignments) group\(report.assignments == 1 ? "" : "s"), \
                \(report.assignmentEvents) event\(report.assignmentEvents == 1 ? "" : "s"), \
                \(report.unlocks) unlock row\(report.unlocks == 1 ? "" : "s"), \
                \(report.attributes) set\(report.attributes == 1 ? "" : "s") of attributes.
                """)
            for segment in report.segmentsListingUser {
                Console.out("  still listed in segment \(segment): remove the id with `flagpole segment set`")
            }
        }
    }
}
