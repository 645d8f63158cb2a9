import EndToEndSupport
import Foundation
import Testing

/// `flagpole demo`, twice: it records 10 000 users and their results, seconds of work, so the soak
/// lane's (CONTRIBUTING.md, "Lanes").
@Suite("flagpole demo")
struct DemoCommandSoakTests {
    let cli: CLI

    init() throws {
        cli = try CLI()
    }

    @Test(
        "demo imports the example, shows the report, the features, the export and a roll-out plan, and is safe to run twice"
    )
    func demo() async throws {
        let first = await cli.run(["demo"])
        #expect(first.status == 0)
        #expect(first.stdout.contains("warning: W201 [Checkout Button Colour]"))
        #expect(first.stdout.contains("as revision 1"))
        #expect(first.stdout.contains("New Onboarding  ·  Feature On/Off A/B Test"))
        #expect(first.stdout.contains("\"owner\": \"growth-team@example.com\""))
        #expect(first.stdout.contains("10000 users recorded now, 0 already recorded."))
        #expect(first.stdout.contains("\"discountRate\": 2.0"))
        #expect(first.stdout.contains("Dry run: this would be revision 3. Nothing was written."))
        let second = await cli.run(["demo"])
        #expect(second.status == 0)
        #expect(second.stdout.contains("identical to revision 2"))
        #expect(second.stdout.contains("0 users recorded now, 10000 already recorded."))
        // The plan's recorded movers are the same both times: the dry run wrote nothing.
        let movers = { (output: String) in
            output.split(separator: "\n").first { $0.contains("recorded users change group") }
        }
        #expect(movers(first.stdout) != nil)
        #expect(movers(first.stdout) == movers(second.stdout))
    }
}
