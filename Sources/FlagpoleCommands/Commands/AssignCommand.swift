import ArgumentParser
import FlagpoleCore
import FlagpoleStore
import Foundation

/// `flagpole assign --feature NAME (--user ID | --users-file FILE|-)`.
struct AssignCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "assign",
        abstract:
            "Put users in a test's groups (its rules on their last attributes, else their points), recording those seen for the first time.",
        discussion: """
            A user's point is murmur3_x86_32(salt + ":" + user) / 2^32 * 100; the group is the variation whose \
            range holds it, with the biases the app uses. Users already recorded keep their group and nothing \
            is written for them. --users-file takes one id per line (blank lines skipped); every id is checked \
            before anything is written. With --json, one JSON object per line.
            """)

    @Option(help: ArgumentHelp("The test's name.", valueName: "name"))
    var feature: String

    @Option(help: ArgumentHelp("One user's id.", valueName: "id"))
    var user: String?

    @Option(help: ArgumentHelp("A file of user ids, one per line, or - for standard input.", valueName: "file"))
    var usersFile: String?

    @OptionGroup var environment: EnvironmentOptions
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard (user == nil) != (usersFile == nil) else {
            throw ValidationError("Give either --user ID or --users-file FILE (one id per line, - for standard input).")
        }
        if let user { _ = try UserOptions.id(user) }
    }

    func run() async throws {
        let users =
            if let user { [try UserOptions.id(user)] } else { try Self.readUsers(InputFile(argument: usersFile!)) }
        let lines = LineWriter()
        let progress = ProgressBar("assigning", total: users.count > 10_000 ? users.count : 0)
        let json = output.json
        let isSingle = user != nil
        let summary = try await database.openStore().assignments.assign(users, to: feature, in: try environment.path())
        {
            assignment in
            if json {
                lines.write(JSONWriter(style: .compact).string(of: assignment.jsonValue))
            } else {
                lines.write(isSingle ? assignment.sentence : assignment.line)
            }
            progress.advance()
        }
        progress.finish()
        lines.flush()
        if !isSingle {
            Console.error(
                "\(users.count) user\(users.count == 1 ? "" : "s") of \(feature): \(summary.recorded) recorded now, \(summary.known) already recorded."
            )
        }
    }

    /// The ids of a users file, every one checked before anything is written.
    ///
    /// - throws: `CommandFailure` naming the first bad line.
    static func readUsers(_ file: InputFile) throws -> [UserID] {
        let bytes = try file.read()
        var users: [UserID] = []
        var lineNumber = 0
        for var line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            if line.isEmpty { continue }
            guard let text = String(validating: line, as: UTF8.self) else {
                throw CommandFailure(
                    "\(file.displayName):\(lineNumber): the line is not valid UTF-8. Nothing was written.")
            }
            do {
                users.append(try UserID(validating: text))
            } catch {
                throw CommandFailure("\(file.displayName):\(lineNumber): \(error.description) Nothing was written.")
            }
        }
        guard !users.isEmpty else { throw CommandFailure("\(file.displayName) has no user ids (one per line).") }
        return users
    }
}
