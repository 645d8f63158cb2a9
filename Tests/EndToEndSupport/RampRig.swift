import Foundation

/// A database with the on/off test `checkout` at Enabled 0 % and recorded users, and a clock
/// file every command and server of the test reads its time from (`FLAGPOLE_CLOCK_FILE`).
public struct RampRig: Sendable {
    public let cli: CLI
    public let clock: URL
    public static let start = Date(timeIntervalSince1970: 1_800_000_000)

    public init(database: String? = nil, users: Int = 500) async throws {
        cli = try CLI(database: database)
        clock = cli.directory.appendingPathComponent("clock")
        try set(day: 0)
        try await cli.succeed(["tenant", "create", "acme"])
        let document = try cli.write(
            #"{"features": [{"name": "checkout", "test-variations": ["Enabled", "Disabled"], "test-biases": [0, 100]}]}"#,
            to: "features.json")
        try await cli.succeed(["import", document, "--tenant", "acme"])
        guard users > 0 else { return }
        let list = try cli.write((0..<users).map { "user-\($0)" }.joined(separator: "\n"), to: "users.txt")
        try await cli.succeed(["assign", "--feature", "checkout", "--users-file", list, "--tenant", "acme"])
    }

    public var environment: [String: String] { ["FLAGPOLE_CLOCK_FILE": clock.path] }

    public func time(day: Double) -> Date { Self.start.addingTimeInterval(day * 86_400) }

    public func set(day: Double) throws {
        try Data(time(day: day).formatted(.iso8601).utf8).write(to: clock)
    }

    /// Runs a command at the rig's time.
    @discardableResult
    public func run(_ arguments: [String]) async -> CLI.Result {
        await cli.run(arguments, environment: environment)
    }

    /// `flagpole serve` at the rig's time, doing scheduled work every 20 ms.
    public func server(log: URL? = nil) throws -> ServerProcess {
        try ServerProcess(cli, arguments: ["--tick-interval", "20"], log: log, environment: environment)
    }

    /// `ramp show checkout --json`'s ramp.
    public func ramp() async throws -> [String: Any] {
        let result = await run(["ramp", "show", "checkout", "--tenant", "acme", "--json"])
        let report = try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any]
        guard let ramp = report?["ramp"] as? [String: Any] else { throw CLI.Failure(["ramp", "show"], result) }
        return ramp
    }

    /// The steps applied, each with the steps it folded.
    public func applied() async throws -> [(step: Int, folded: [Int])] {
        try await (ramp()["applied"] as? [[String: Any]] ?? []).map {
            ($0["step"] as! Int, $0["folded"] as! [Int])
        }
    }

    /// Waits (up to 60 s, reading the ramp every 50 ms) until `count` steps are applied or folded.
    public func waitForSteps(_ count: Int) async throws -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if try await applied().reduce(0, { $0 + 1 + $1.folded.count }) >= count { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// The revisions, newest first, as `revisions --json` lists them.
    public func revisions() async throws -> [[String: Any]] {
        try JSONSerialization.jsonObject(
            with: Data(await run(["revisions", "--tenant", "acme", "--json"]).stdoutBytes)) as? [[String: Any]] ?? []
    }
}
