import EndToEndSupport
import Foundation
import Testing

/// The built `flagpole` binary as a shell runs it: what only a process shows, beside the command
/// tests that run the same commands in process (`FlagpoleCommandsTests`).
@Suite("The flagpole binary")
struct BinaryTests {
    let cli: CLI

    init() throws {
        cli = try CLI()
    }

    @Test("Exit statuses as a shell sees them: 0 with help on stdout, 64 for bad arguments, 1 for a failed command")
    func exitStatuses() throws {
        let help = try cli.runBinary(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("USAGE: flagpole <subcommand>"), "\(help.stdout)")
        #expect(help.stderr.isEmpty)

        let usage = try cli.runBinary(["tenant", "create", "Not A Slug"])
        #expect(usage.status == 64)
        #expect(usage.stderr.contains("Usage: flagpole tenant create"))
        #expect(usage.stdout.isEmpty)

        let failure = try cli.runBinary(["tenant", "list"])
        #expect(failure.status == 1)
        #expect(failure.stderr.contains("There is no database at \(cli.databasePath)."), "\(failure.stderr)")
    }

    @Test("An argument that isn't UTF-8 is refused with 64, naming it, and nothing is written")
    func argumentsNotUTF8() throws {
        #expect(try cli.runBinary(["tenant", "create", "acme"]).status == 0)
        // A shell passes the byte 0xFF as it is; Swift's CommandLine.arguments would read U+FFFD.
        let child = try ChildProcess(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", #"exec "$0" tenant create globex --name "$(printf 'Globex\377')""#, CLI.executable.path],
            in: cli.directory, environment: cli.commandEnvironment)
        let (_, _, err) = child.finishWithBytes()
        let stderr = String(decoding: err, as: UTF8.self)
        #expect(child.process.terminationStatus == 64)
        #expect(stderr.contains("argument 5") && stderr.contains("is not valid UTF-8"), "\(stderr)")
        let list = try cli.runBinary(["tenant", "list"])
        #expect(list.stdout.contains("acme") && !list.stdout.contains("globex"), "\(list.stdout)")
    }

    @Test("A pipe into `-` is read to its end; a relative --db is a file of the working directory")
    func standardInputAndWorkingDirectory() throws {
        let created = try cli.runBinary(["tenant", "create", "acme", "--db", "./here.sqlite"])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(FileManager.default.fileExists(atPath: cli.directory.appendingPathComponent("here.sqlite").path))
        // Larger than a pipe's buffer, so the binary must read until the writer closes it.
        let features = (0..<2_000).map { #"{"name": "feature-\#($0)", "enabled": true}"# }
        let document = Array(#"{"features": [\#(features.joined(separator: ", "))]}"#.utf8)
        #expect(document.count > 65_536)
        let imported = try cli.runBinary(
            ["import", "-", "--tenant", "acme", "--db", "here.sqlite", "--json"], stdin: document)
        #expect(imported.status == 0, "\(imported.stderr)")
        let outcome = try JSONSerialization.jsonObject(with: Data(imported.stdoutBytes)) as? [String: Any]
        #expect((outcome?["added"] as? [String])?.count == 2_000, "\(imported.stdout.prefix(300))")
    }

    @Test("Imports by concurrent processes into one file all land, with contiguous revision numbers")
    func concurrentImports() async throws {
        try await cli.succeed(["tenant", "create", "acme"])
        let files = try (0..<8).map { index in
            try cli.write(#"{"features": [{"name": "feature-\#(index)", "enabled": true}]}"#, to: "f\(index).json")
        }
        let children = try files.map { try cli.start(["import", $0, "--tenant", "acme"]) }
        #expect(children.map { $0.finish().ending } == Array(repeating: .exited(0), count: 8))
        let revisions = try #require(
            try await cli.json(["revisions", "--tenant", "acme", "--json"]) as? [[String: Any]])
        #expect(revisions.compactMap { $0["number"] as? Int }.sorted() == Array(1...8))
    }
}
