import EndToEndSupport
import FlagpoleCore
import FlagpoleTestSupport
import Foundation

/// Writes to one database through the command line and the server, SIGKILLs the writer at a
/// random moment of each write, and keeps the ledger of what every writer acknowledged.
///
/// Each cycle is one command (`import`, `bias set`, `assign`) or one to three concurrent
/// requests to the server (import, assignments of many users or of one, biases, an app's first
/// fetch of its pinned document), then a kill: of the command if it is
/// still running, of the server always (it is restarted and must serve). The first runs of
/// each operation, and 15 % of the later ones, run to completion: they measure when the writer
/// holds the store's write lock (SQLite's, or the advisory lock of PostgreSQL's write
/// transactions), and their acknowledged writes must survive the later kills. Most
/// kills wait for the writer to take the lock and land a random moment into its measured hold;
/// the rest land anywhere from the start to a quarter past the measured end, so start-up,
/// parsing and the answer after the commit are hit too.
final class CrashHarness {
    /// What a cycle runs, drawn with equal odds.
    enum Operation: String, CaseIterable {
        case cliImport = "flagpole import"
        case cliBias = "flagpole bias set"
        case cliAssign = "flagpole assign"
        case server = "server (POST import, assignments, biases; GET ?user=)"
    }

    /// Where a kill landed.
    enum Landing: String, CaseIterable {
        case notKilled = "not killed (ran to completion, measuring the write window)"
        case beforeTransaction = "killed before its transaction"
        case midTransaction = "killed mid-transaction (holding the write lock)"
        case afterCommit = "killed after commit, before answering"
        case afterCompletion = "killed after the writer answered"
    }

    static let tenant = "acme"
    static let environments = ["production", "staging"]
    /// Runs of each operation that are measured rather than killed.
    static let calibrationRuns = 2

    let cli: CLI
    let files = ImportFiles()
    let consistency: StoreConsistency
    let probe: any WriteLockProbe
    private(set) var ledger = WriteLedger()
    private(set) var landings: [Landing: Int] = [:]
    private(set) var restarts = 0
    private(set) var server: ServerProcess
    private var random: SeededGenerator
    private let key: String
    private var operation = 0
    private var runs: [Operation: Int] = [:]
    /// Seconds from a writer's start to taking and to releasing the write lock, in each run
    /// that completed.
    private var measured: [Operation: [(start: Double, end: Double)]] = [:]

    /// The median measured window of each operation.
    var windows: [Operation: (start: Double, end: Double)] {
        measured.mapValues { runs in
            let (starts, ends) = (runs.map(\.start).sorted(), runs.map(\.end).sorted())
            return (starts[starts.count / 2], ends[ends.count / 2])
        }
    }

    init(seed: UInt64, backend: Backend) throws {
        random = SeededGenerator(seed: seed)
        let postgres = backend == .postgres ? try TestPostgres.newDatabase("crash") : nil
        cli = try CLI(database: postgres)
        consistency = StoreConsistency(shell: backend.shell(on: cli.databasePath), tenant: Self.tenant)
        if let postgres {
            probe = try PostgresWriteLockProbe(url: postgres)
        } else {
            probe = SQLiteWriteLockProbe(databasePath: cli.databasePath)
        }
        try Self.require(try cli.runBinary(["tenant", "create", Self.tenant]))
        try Self.require(try cli.runBinary(["env", "create", "staging", "--tenant", Self.tenant]))
        key = try Self.require(try cli.runBinary(["key", "create", "--tenant", Self.tenant, "--role", "editor"])).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        for environment in Self.environments {
            let tag = "setup-\(environment)"
            let bytes = files.make(tag: tag, count: 20, biases: [50, 50], using: &random)
            let file = try cli.write(String(decoding: bytes, as: UTF8.self), to: "\(tag).json")
            let result = try Self.require(
                try cli.runBinary([
                    "import", file, "--tenant", Self.tenant, "--env", environment, "--message", tag, "--json",
                ]))
            var entry = WriteLedger.Entry(
                tag: tag, environment: environment, write: .importDocument(rendered: Self.rendered(bytes)))
            entry.isAcknowledged = true
            (entry.revision, entry.isUnchanged) = Self.answer(result.stdout)
            ledger.append(entry)
        }
        server = try ServerProcess(cli, arguments: Self.serverArguments)
    }

    /// The harness is one client recording many new users: no limit on them.
    static let serverArguments = ["--new-user-rate", "1000000", "--new-user-burst", "1000000"]

    // MARK: Cycles

    /// One write (or a few, to the server) and one kill.
    func runCycle() throws {
        let operation = Operation.allCases.randomElement(using: &random)!
        let environment = Self.environments[Int.random(in: 0..<10, using: &random) < 7 ? 0 : 1]
        switch operation {
        case .cliImport:
            let (entry, bytes) = makeImport(in: environment)
            let file = try cli.write(String(decoding: bytes, as: UTF8.self), to: "\(entry.tag).json")
            try runCommand(
                operation, entry,
                ["import", file, "--tenant", Self.tenant, "--env", environment, "--message", entry.tag, "--json"])
        case .cliBias:
            let (entry, biases) = makeBiases(in: environment)
            try runCommand(
                operation, entry,
                ["bias", "set", ImportFiles.rollout] + biases.map { String(Int($0)) }
                    + ["--tenant", Self.tenant, "--env", environment, "--message", entry.tag, "--json"])
        case .cliAssign:
            let (entry, users) = makeAssignment(in: environment)
            let file = try cli.write(users.joined(separator: "\n") + "\n", to: "\(entry.tag).txt")
            try runCommand(
                operation, entry,
                [
                    "assign", "--feature", ImportFiles.rollout, "--users-file", file,
                    "--tenant", Self.tenant, "--env", environment,
                ])
        case .server:
            try runRequests()
        }
        runs[operation, default: 0] += 1
        // Without its answers every kill would count as before the transaction.
        if let failure = (probe as? PostgresWriteLockProbe)?.failure { throw Failure(failure) }
    }

    /// Runs a command, killing it as `killPlan` says.
    private func runCommand(_ operation: Operation, _ entry: WriteLedger.Entry, _ arguments: [String]) throws {
        var entry = entry
        let child = try cli.start(arguments)
        var landing = Landing.notKilled
        switch killPlan(operation) {
        case .never:
            measure(operation, writer: child.pid, from: child.started) { child.isRunning }
        case let plan:
            landing = .afterCompletion
            if wait(plan, for: child.pid, from: child.started, while: { child.isRunning }) {
                landing = probe.holder() == child.pid ? .midTransaction : .beforeTransaction
                child.kill()
            }
        }
        let (ending, stdout, stderr) = child.finish()
        if ending == .exited(0) {
            entry.isAcknowledged = true
            (entry.revision, entry.isUnchanged) = Self.answer(stdout)
        } else if ending != .killed {
            throw Failure("\(arguments.joined(separator: " ")) exited \(ending) without being killed: \(stderr)")
        }
        ledger.append(entry)
        switch (landing, ending) {
        // It exited between the last look and the signal.
        case (.midTransaction, .exited), (.beforeTransaction, .exited): count(.afterCompletion)
        case (.beforeTransaction, .killed) where try landed(entry): count(.afterCommit)
        default: count(landing)
        }
    }

    /// Sends one to three writes to the server at once, then kills it at a random moment of
    /// their window, restarts it and checks it serves.
    private func runRequests() throws {
        let base = "\(server.baseURL)/api/v1/tenants/\(Self.tenant)/environments"
        var requests: [(entry: WriteLedger.Entry, child: ChildProcess, body: URL)] = []
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            let environment = Self.environments[Int.random(in: 0..<10, using: &random) < 7 ? 0 : 1]
            let feature = "\(base)/\(environment)/features/Crash%20Rollout"
            var entry: WriteLedger.Entry
            var arguments = ["-X", "POST", "-H", "Authorization: Bearer \(key)"]
            switch Int.random(in: 0..<5, using: &random) {
            case 0:
                let (made, bytes) = makeImport(in: environment)
                entry = made
                arguments += [
                    "--data-binary",
                    "@" + (try cli.write(String(decoding: bytes, as: UTF8.self), to: "\(entry.tag).json")),
                    "\(base)/\(environment)/import?message=\(entry.tag)",
                ]
            case 1:
                let (made, users) = makeAssignment(in: environment)
                entry = made
                let body = #"{"users": [\#(users.map { "\"\($0)\"" }.joined(separator: ","))]}"#
                arguments += [
                    "-H", "Content-Type: application/json", "--data-binary",
                    "@" + (try cli.write(body, to: "\(entry.tag).json")),
                    "\(feature)/assignments",
                ]
            case 3:
                // An app's first fetch of its pinned document: first assignments through group commit.
                entry = makePinned(in: environment)
                arguments = [
                    "--dump-header", cli.directory.appendingPathComponent("\(entry.tag).headers").path,
                    "\(server.baseURL)/t/\(Self.tenant)/\(environment)/features.json?user=\(entry.tag)-0",
                ]
            case 4:
                // One user, as an app's backend posts them: the direct way, through group commit too.
                let (made, users) = makeAssignment(in: environment, count: 1)
                entry = made
                arguments += [
                    "-H", "Content-Type: application/json", "--data-binary", #"{"users": ["\#(users[0])"]}"#,
                    "\(feature)/assignments",
                ]
            default:
                let (made, biases) = makeBiases(in: environment)
                entry = made
                arguments += [
                    "-H", "Content-Type: application/json",
                    "--data-binary",
                    #"{"biases": [\#(biases.map { String(Int($0)) }.joined(separator: ", "))], "message": "\#(entry.tag)"}"#,
                    "\(feature)/biases",
                ]
            }
            let body = cli.directory.appendingPathComponent("\(entry.tag).response")
            requests.append((entry, try Curl.start(arguments, bodyFile: body), body))
        }
        let started = requests[0].child.started
        let victim = server.process.processIdentifier
        let isRunning = { requests.contains { $0.child.isRunning } }
        var landing = Landing.afterCompletion
        switch killPlan(.server) {
        case .never:
            measure(.server, writer: victim, from: started, while: isRunning)
        case let plan:
            if wait(plan, for: victim, from: started, while: isRunning) {
                landing = probe.holder() == victim ? .midTransaction : .beforeTransaction
            }
        }
        server.kill()
        var unacknowledgedLanded = false
        for (entry, child, bodyURL) in requests {
            var entry = entry
            let (ending, stdout, _) = child.finish()
            let body = (try? String(contentsOf: bodyURL, encoding: .utf8)) ?? ""
            if ending == .exited(0), let status = Int(stdout), (200..<300).contains(status) {
                entry.isAcknowledged = true
                if case .pinned = entry.write {
                    entry.write = .pinned(tests: try pinnedTests(of: entry, body: bodyURL))
                } else {
                    (entry.revision, entry.isUnchanged) = Self.answer(body)
                }
            } else if case .exited(let code) = ending, code == 0, let status = Int(stdout), status != 0 {
                throw Failure("the server answered \(status) to \(entry.tag): \(body)")
            } else if try landed(entry) {
                unacknowledgedLanded = true
            }
            ledger.append(entry)
        }
        if landing == .beforeTransaction && unacknowledgedLanded { landing = .afterCommit }
        count(landing)
        server = try ServerProcess(cli, arguments: Self.serverArguments)
        restarts += 1
    }

    /// The server answers and serves each environment's latest revision, byte for byte.
    func checkServes() throws -> [String] {
        var problems: [String] = []
        let health = try Curl.run(["\(server.baseURL)/healthz"])
        if health.status != 200 { problems.append("after a restart /healthz answered \(health.status)") }
        for environment in Self.environments {
            guard let latest = consistency.latest[environment] else { continue }
            let url = "\(server.baseURL)/t/\(Self.tenant)/\(environment)/features.json"
            // A server started before a command's write notices it within its poll interval.
            let deadline = Date().addingTimeInterval(5)
            var fetched = try Curl.run([url])
            while fetched.headers["flagpole-revision"] != String(latest.number) && Date() < deadline {
                fetched = try Curl.run([url])
            }
            if fetched.status != 200 || fetched.headers["flagpole-revision"] != String(latest.number)
                || fetched.body != latest.bytes
            {
                problems.append(
                    "\(environment): served \(fetched.status) revision \(fetched.headers["flagpole-revision"] ?? "none"), not revision \(latest.number)"
                )
            }
        }
        return problems
    }

    // MARK: Kill timing

    /// When to kill a writer.
    private enum KillPlan {
        /// This long after its start: anywhere in its run, start-up and answer included.
        case after(TimeInterval)
        /// This long after it is seen taking the write lock: inside its transaction, mostly.
        case whileWriting(TimeInterval)
        /// Not before it has answered (the server is then killed all the same): these runs
        /// measure the write window, and leave acknowledged writes for later kills to spare.
        case never
    }

    /// Shares of the kills aimed at the transaction, and of those at any moment of the run;
    /// the other runs complete.
    static let (aimedShare, anyMomentShare) = (0.6, 0.25)

    /// A random plan, with a random moment in the operation's measured window.
    private func killPlan(_ operation: Operation) -> KillPlan {
        guard (runs[operation] ?? 0) >= Self.calibrationRuns, let window = windows[operation] else { return .never }
        let draw = Double.random(in: 0..<1, using: &random)
        if draw < Self.aimedShare {
            return .whileWriting(Double.random(in: 0...max(0.001, window.end - window.start) * 1.2, using: &random))
        }
        if draw < Self.aimedShare + Self.anyMomentShare {
            return .after(Double.random(in: 0...window.end * 1.25, using: &random))
        }
        return .never
    }

    /// Waits as `plan` says while `isRunning`; true if the writer is still running then.
    private func wait(_ plan: KillPlan, for writer: pid_t, from started: Date, while isRunning: () -> Bool) -> Bool {
        let deadline: Date
        switch plan {
        case .after(let delay):
            deadline = started.addingTimeInterval(delay)
        case .whileWriting(let delay):
            while isRunning() && probe.holder() != writer {
                usleep(100)
            }
            deadline = Date().addingTimeInterval(delay)
        case .never:
            deadline = .distantFuture
        }
        while isRunning() && Date() < deadline {
            usleep(100)
        }
        return isRunning()
    }

    /// Polls the write lock while `isRunning`, and records when the writer held it.
    private func measure(_ operation: Operation, writer: pid_t, from started: Date, while isRunning: () -> Bool) {
        var seen: (first: Double, last: Double)?
        while isRunning() {
            if probe.holder() == writer {
                let now = Date().timeIntervalSince(started)
                seen = (seen?.first ?? now, now)
            }
            usleep(200)
        }
        // A write too short to catch: the whole run is its window.
        let (first, last) = seen ?? (0, Date().timeIntervalSince(started))
        measured[operation, default: []].append((first, last))
    }

    private func count(_ landing: Landing) {
        landings[landing, default: 0] += 1
    }

    /// Whether an unacknowledged write is in the database.
    private func landed(_ entry: WriteLedger.Entry) throws -> Bool {
        switch entry.write {
        case .importDocument, .biases, .edit:
            return try consistency.shell.int("SELECT count(*) FROM revisions WHERE message = '\(entry.tag)'") > 0
        case .assign, .pinned:
            return try consistency.shell.int(
                "SELECT count(*) FROM assignments WHERE \(consistency.usersTagged(entry.tag))") > 0
        }
    }

    /// The tests a pinned document answered: those it pins. Its user must be recorded in all of
    /// them, as `Flagpole-Recorded: true` says.
    private func pinnedTests(of entry: WriteLedger.Entry, body: URL) throws -> Int {
        let headers =
            (try? String(contentsOf: cli.directory.appendingPathComponent("\(entry.tag).headers"), encoding: .utf8))
            ?? ""
        guard headers.lowercased().contains("flagpole-recorded: true") else {
            throw Failure("the pinned document of \(entry.tag) was not recorded: \(headers)")
        }
        guard case .object(let root) = try JSONParser.parse(Array(try Data(contentsOf: body))).value,
            case .array(let features)? = root["features"]
        else { throw Failure("the pinned document of \(entry.tag) is not a features document") }
        return features.count { feature in
            if case .object(let object) = feature { object[Feature.assignmentKey] != nil } else { false }
        }
    }

    // MARK: Writes

    private func makeImport(in environment: String) -> (WriteLedger.Entry, [UInt8]) {
        let tag = nextTag("import")
        let bytes = files.make(
            tag: tag, count: Int.random(in: 50...600, using: &random), biases: ImportFiles.biases(using: &random),
            using: &random)
        return (
            WriteLedger.Entry(
                tag: tag, environment: environment, write: .importDocument(rendered: Self.rendered(bytes))), bytes
        )
    }

    private func makeBiases(in environment: String) -> (WriteLedger.Entry, [Double]) {
        let biases = ImportFiles.biases(using: &random)
        return (
            WriteLedger.Entry(
                tag: nextTag("bias"), environment: environment,
                write: .biases(feature: ImportFiles.rollout, biases: biases)), biases
        )
    }

    private func makeAssignment(in environment: String, count: Int? = nil) -> (WriteLedger.Entry, [String]) {
        operation += 1
        let tag = WriteLedger.assignTag(operation)
        let users = (0..<(count ?? Int.random(in: 100...1_000, using: &random))).map { "\(tag)-\($0)" }
        return (
            WriteLedger.Entry(
                tag: tag, environment: environment, write: .assign(feature: ImportFiles.rollout, count: users.count)),
            users
        )
    }

    private func makePinned(in environment: String) -> WriteLedger.Entry {
        operation += 1
        return WriteLedger.Entry(
            tag: WriteLedger.assignTag(operation), environment: environment, write: .pinned(tests: nil))
    }

    private func nextTag(_ kind: String) -> String {
        operation += 1
        return "\(kind)-\(operation)"
    }

    // MARK: Reading answers

    /// What the store renders for `bytes`: the revision an import of them must hold.
    private static func rendered(_ bytes: [UInt8]) -> [UInt8] {
        DocumentDecoder.decode(bytes).document!.rendered()
    }

    /// The revision a JSON answer names, and whether it says nothing changed (an import's
    /// `"status": "unchanged"`, an edit's `"unchanged": true`: the revision is then the current one).
    /// An import's own `"unchanged"` counts features, and Foundation reads the number 1 as
    /// `true`: its status decides.
    private static func answer(_ json: String) -> (revision: Int?, isUnchanged: Bool) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else {
            return (nil, false)
        }
        let isUnchanged =
            if let status = object["status"] as? String { status == "unchanged" } else {
                object["unchanged"] as? Bool == true
            }
        return (object["revision"] as? Int, isUnchanged)
    }

    @discardableResult
    private static func require(_ result: CLI.Result) throws -> CLI.Result {
        guard result.status == 0 else { throw Failure("setup failed (exit \(result.status)): \(result.stderr)") }
        return result
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
