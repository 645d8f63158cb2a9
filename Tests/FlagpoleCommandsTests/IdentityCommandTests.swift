import EndToEndSupport
import Foundation
import Testing

/// The identity rule on the command line: `feature show` and `assign` find a feature by any
/// spelling of its name; a users file with two spellings of one id records two users.
@Suite("Identity of users and feature names on the command line")
struct IdentityCommandTests {
    @Test(
        "feature show and assign find a feature by its name in NFD; a users file with both spellings of ids, above the batch size, records them apart"
    )
    func spellings() async throws {
        let cli = try CLI()
        #expect(await cli.run(["tenant", "create", "acme"]).status == 0)
        let file = try cli.write(
            #"{"features": [{"name": "Caf\u00e9 test", "test-variations": ["A", "B"]}]}"#, to: "f.json")
        #expect(await cli.run(["import", file, "--tenant", "acme"]).status == 0)

        let shown = await cli.run(["feature", "show", "Cafe\u{301} test", "--tenant", "acme"])
        #expect(shown.status == 0, "\(shown.stderr)")
        // Shown under its name as written (NFC), whichever spelling found it.
        #expect(shown.stdoutBytes.starts(with: Array("Caf\u{E9} test  ·  A/B Test".utf8)), "\(shown.stdout)")

        // 100 ids twice over, once in each spelling: 200 users.
        let users = (0..<100).flatMap { ["caf\u{E9}-\($0)", "cafe\u{301}-\($0)"] }
        let usersFile = try cli.write(users.joined(separator: "\n") + "\n", to: "users.txt")
        let assigned = await cli.run([
            "assign", "--feature", "Cafe\u{301} test", "--users-file", usersFile, "--tenant", "acme", "--json",
        ])
        #expect(assigned.status == 0, "\(assigned.stderr)")
        #expect(
            assigned.stderr.contains("200 users of Cafe\u{301} test: 200 recorded now, 0 already recorded"),
            "\(assigned.stderr)")
        let lines = assigned.stdout.split(separator: "\n")
        #expect(lines.count == 200)
        let history = await cli.run(["assignments", "--tenant", "acme", "--user", "cafe\u{301}-7", "--csv"])
        #expect(history.status == 0)
        #expect(
            history.stdout.split(separator: "\n").count == 2,
            "a header and the one event of that spelling: \(history.stdout)")
    }
}
