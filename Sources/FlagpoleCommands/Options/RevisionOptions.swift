import ArgumentParser
import FlagpoleStore

/// `--dry-run` and `--message TEXT`, for commands that write a revision.
struct RevisionOptions: ParsableArguments {
    @Flag(help: "Show the plan; write nothing.")
    var dryRun = false

    @Option(help: "The revision message.")
    var message: String?

    /// Opens the store (read-only for a dry run), runs `edit`, and prints its plan and verdict.
    func apply(
        _ database: DatabaseOptions, output: OutputOptions, isForced: Bool = false,
        _ edit: (FeatureStore, EditOptions) async throws -> EditOutcome
    ) async throws {
        let options = EditOptions(
            isDryRun: dryRun, isForced: isForced, message: message, actor: Invocation.current.actor)
        let store = try await database.openStore(dryRun ? .readOnly : .readWrite)
        let status = StatusLine(dryRun ? "planning" : "applying and re-evaluating recorded users")
        let outcome: EditOutcome
        do {
            outcome = try await edit(store, options)
            status.finish()
        } catch {
            status.finish()
            throw error
        }
        EditReport(outcome: outcome, isDryRun: dryRun).print(json: output.json)
    }
}
