import EndToEndSupport
import Foundation
import Testing

/// The command line on files written to hurt: a clear message and exit 1, the database as it was.
@Suite("flagpole on hostile files")
struct HostileFileCommandTests {
    let cli: CLI

    init() throws {
        cli = try CLI()
    }

    /// acme/production at revision 1 from a real file; returns what must not change.
    func prepare() async throws -> (revisions: String, export: [UInt8]) {
        await cli.run(["tenant", "create", "acme"])
        #expect(await cli.run(["import", CLI.fixture("rwbutler-HEAD-Features.json"), "--tenant", "acme"]).status == 0)
        return try await state()
    }

    func state() async throws -> (revisions: String, export: [UInt8]) {
        let revisions = await cli.run(["revisions", "--tenant", "acme", "--json"])
        let export = await cli.run(["export", "--tenant", "acme"])
        return (revisions.stdout, export.stdoutBytes)
    }

    @Test("A 200 MB file is refused by its size before it is read: exit 1, the limit named, nothing written")
    func twoHundredMegabytes() async throws {
        let before = try await prepare()
        // Sparse: 200 MB on paper, no disk blocks and no memory in the test.
        let path = cli.directory.appendingPathComponent("huge.json").path
        _ = FileManager.default.createFile(atPath: path, contents: Data("{\"features\": [".utf8))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: 200 << 20)
        try handle.close()

        for command in [["import", path, "--tenant", "acme"], ["validate", path]] {
            let result = await cli.run(command)
            #expect(result.status == 1, "\(command): \(result.stderr)")
            #expect(result.stderr.contains("\(path) is 209 715 200 bytes"), "\(result.stderr)")
            #expect(result.stderr.contains("at most 67 108 864 bytes (64 MiB)"))
            #expect(result.stderr.contains("Nothing was read or written"))
        }
        await #expect(try state() == before)
    }

    @Test("A stream with no end is cut off one byte past the limit, and refused")
    func endlessStream() async throws {
        let result = await cli.run(["validate", "/dev/zero"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("/dev/zero is over 67 108 864 bytes"), "\(result.stderr)")
    }

    @Test(
        "Invalid UTF-8, a lone surrogate, a duplicate key, a too-large number and deep nesting: each at its line and column",
        arguments: [
            (
                Array("{\"features\": [\n  {\"name\": \"caf".utf8) + [0xE9] + Array("\"}]}".utf8), "2:16: error: E100",
                "invalid UTF-8"
            ),
            (Array("{\"features\": [{\"name\": \"\\uD800\"}]}".utf8), "1:25: error: E100", "surrogate"),
            (Array("{\"features\": [{\"name\": \"a\", \"name\": \"b\"}]}".utf8), "1:29: error: E100", "duplicate key"),
            (
                Array("{\"features\": [{\"name\": \"a\", \"x\": 1e400}]}".utf8), "1:34: error: E100",
                "too large for a double"
            ),
            (Array(("[" + String(repeating: "[", count: 1_000)).utf8), "1:513: error: E100", "nested deeper than 512"),
            (
                Array("[".utf8) + Array(repeating: Array("1,".utf8), count: 100_000).joined() + Array("1]".utf8),
                "1:2: error: E110", "not an object"
            ),
        ] as [([UInt8], String, String)])
    func refusedWithPosition(bytes: [UInt8], place: String, words: String) async throws {
        let before = try await prepare()
        let path = cli.directory.appendingPathComponent("hostile.json")
        try Data(bytes).write(to: path)

        let result = await cli.run(["import", path.path, "--tenant", "acme"])

        #expect(result.status == 1)
        #expect(result.stderr.contains("\(path.path):\(place)"), "\(result.stderr.prefix(2_000))")
        #expect(result.stderr.contains(words))
        #expect(result.stderr.contains("fix: "))
        #expect(result.stderr.contains("Nothing was written"))
        // However many problems, the report stays short: at most 100 of a kind and a count.
        #expect(result.stderr.utf8.count < 100_000)
        await #expect(try state() == before)
    }
}
