import EndToEndSupport
import FlagpoleTestSupport
import Foundation
import Synchronization
import Testing

/// The command line and the server writing the same database file at the same time, as they
/// do in production: every write succeeds (no `busy` reaches a user) and every write is there.
@Suite("Concurrent writers, end to end", .serialized)
struct ConcurrentWritersTests {
    /// Writes by each side (a multiple of 20); `FLAGPOLE_CONCURRENT_WRITES` changes it for a local run.
    static let writes = ProcessInfo.processInfo.environment["FLAGPOLE_CONCURRENT_WRITES"].flatMap(Int.init) ?? 2_000
    /// Commands running at once; each is a process of its own, as from several shells or cron jobs.
    static let commandWorkers = 4
    /// Connections the server's requests use at once.
    static let connections = 8
    /// The requests are sent in this many batches, paced with the commands.
    static let batches = 20

    static let tenant = "acme"
    static let test = "Example MVT Test"
    static let overridden = "Example A/B Test"
    static let unlockFlag = "Example Unlock Flag"

    /// One write, by either side, and the ledger entry of a toggle (the only writes that make revisions).
    struct Write {
        var label: String
        var toggle: WriteLedger.Entry?
    }

    @Test(
        "Command-line and HTTP writes (2 000 each; 500 on PostgreSQL) on one database at once: all succeed, all are present",
        arguments: Backend.allCases)
    func commandLineAndServerTogether(_ backend: Backend) async throws {
        let seed = SeededGenerator.seed(fromEnvironment: "FLAGPOLE_CONCURRENCY_SEED")
        var random = SeededGenerator(seed: seed)
        let postgres = backend == .postgres ? try TestPostgres.newDatabase("writers") : nil
        let writes = postgres == nil ? Self.writes : Self.writes / 4
        let cli = try CLI(database: postgres)
        try #require(await cli.run(["tenant", "create", Self.tenant]).status == 0)
        try #require(
            await cli.run(["import", CLI.fixture("rwbutler-HEAD-Features.json"), "--tenant", Self.tenant]).status == 0)
        let key = await cli.run(["key", "create", "--tenant", Self.tenant, "--role", "editor"]).stdout
            .trimmingCharacters(
                in: .whitespacesAndNewlines)
        let server = try ServerProcess(cli)
        defer { _ = server.stop() }

        let commands = Self.commandWrites(writes).shuffled(using: &random)
        let requests = try Self.requestWrites(writes, server: server, key: key, in: cli.directory).shuffled(
            using: &random)
        // The requests go in batches, each sent once the commands have done as large a share of
        // theirs: the server would otherwise finish in seconds and the commands go on alone.
        let batchSize = requests.count / Self.batches
        let batches = try stride(from: 0, to: requests.count, by: batchSize).map { first in
            try cli.write(
                requests[first..<min(first + batchSize, requests.count)].map(\.config).joined(separator: "next\n"),
                to: "requests-\(first).curl")
        }

        let started = Date()
        let progress = Progress()
        let arguments = commands.map(\.arguments)
        Thread.detachNewThread {
            progress.finish(Self.runAll(arguments, on: cli, workers: Self.commandWorkers, progress: progress))
        }
        var sending: ChildProcess?
        var sent = 0
        var serverSeconds: TimeInterval = 0
        var curlOut = ""
        var curlFailures: [String] = []
        var commandsDone: (results: [CLI.Result], at: Date)?
        while sending != nil || sent < batches.count || commandsDone == nil {
            if let curl = sending, !curl.isRunning {
                serverSeconds += Date().timeIntervalSince(curl.started)
                let (ending, out, err) = curl.finish()
                curlOut += out
                if ending != .exited(0) { curlFailures.append(err) }
                sending = nil
            }
            if sending == nil, sent < batches.count, progress.done * batches.count >= sent * commands.count {
                sending = try ChildProcess(
                    URL(fileURLWithPath: "/usr/bin/env"),
                    [
                        "curl", "--silent", "--show-error", "--parallel", "--parallel-max", String(Self.connections),
                        "--config", batches[sent],
                    ],
                    in: cli.directory)
                sent += 1
            }
            commandsDone = progress.result
            usleep(1_000)
        }
        let finished = Date()
        let commandResults = commandsDone!.results
        #expect(curlFailures.isEmpty, "curl: \(curlFailures.prefix(3))")

        // Every command exited 0 and every request got a 2xx.
        var ledger = WriteLedger()
        var failures: [String] = []
        for (command, result) in zip(commands, commandResults) {
            if result.status != 0 {
                failures.append("\(command.arguments.joined(separator: " ")): exit \(result.status): \(result.stderr)")
            } else if var toggle = command.toggle {
                Self.acknowledge(&toggle, answer: result.stdout)
                ledger.append(toggle)
            }
        }
        var statuses: [String: Int] = [:]
        for line in curlOut.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            statuses[String(parts[1])] = Int(parts[0])
        }
        for request in requests {
            let answer = (try? String(contentsOf: request.output, encoding: .utf8)) ?? ""
            guard let status = statuses[request.output.path], (200..<300).contains(status) else {
                failures.append(
                    "\(request.write.label): HTTP \(statuses[request.output.path].map(String.init) ?? "no answer"): \(answer)"
                )
                continue
            }
            if var toggle = request.write.toggle {
                Self.acknowledge(&toggle, answer: answer)
                ledger.append(toggle)
            }
        }
        let commandSeconds = commandsDone!.at.timeIntervalSince(started)
        let totalSeconds = finished.timeIntervalSince(started)
        print(
            """
            concurrent writers: \(commands.count) commands (\(Self.commandWorkers) processes at a time) in \(String(format: "%.1f", commandSeconds)) s \
            = \(Int(Double(commands.count) / commandSeconds))/s; \(requests.count) requests (\(Self.connections) connections, \
            \(batches.count) batches paced with the commands), the server busy \(String(format: "%.1f", serverSeconds)) s \
            = \(Int(Double(requests.count) / serverSeconds))/s; \(commands.count + requests.count) writes in \
            \(String(format: "%.1f", totalSeconds)) s = \(Int(Double(commands.count + requests.count) / totalSeconds))/s; \
            \(failures.count) failed; seed \(seed)
            """)
        #expect(
            failures.isEmpty, "\(failures.count) writes failed, first: \(failures.prefix(5).joined(separator: "\n"))")

        // Every write is there (in SQL both backends run).
        func users(_ prefix: String, _ condition: String) throws -> Int {
            let sql = "SELECT count(*) FROM \(condition) AND user_id LIKE '\(prefix)-%'"
            guard let postgres else { return try SQLiteShell(databasePath: cli.databasePath).int(sql) }
            return Int(try TestPostgres.psql(postgres, sql).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
        }
        let half = writes / 2
        let overrides = writes / 4
        let unlocks = writes * 3 / 20
        for side in ["cli", "srv"] {
            #expect(
                try users(
                    "\(side)-a", "assignments WHERE feature_id = (SELECT id FROM features WHERE name = '\(Self.test)')")
                    == half)
            #expect(
                try users(
                    "\(side)-o",
                    "assignments WHERE is_override AND variation = '\(side == "cli" ? "Group A" : "Group B")'")
                    == overrides)
            #expect(try users("\(side)-u", "unlocks WHERE unlocked") == unlocks)
        }
        // The consistency checker reads through the database's own client, sqlite3 or psql.
        let consistency = StoreConsistency(shell: backend.shell(on: cli.databasePath), tenant: Self.tenant)
        let problems = try consistency.violations(against: ledger)
        #expect(problems.isEmpty, "\(problems.prefix(10).joined(separator: "\n"))")
        if failures.isEmpty && problems.isEmpty { try? FileManager.default.removeItem(at: cli.directory) }
    }

    // MARK: The writes

    struct Command {
        var arguments: [String]
        var toggle: WriteLedger.Entry?
    }

    /// Half assignments of one user, a quarter overrides, 15 % unlocks, 10 % feature toggles.
    static func commandWrites(_ writes: Int) -> [Command] {
        var commands: [Command] = []
        for index in 0..<writes / 2 {
            commands.append(
                Command(arguments: ["assign", "--feature", test, "--user", "cli-a-\(index)", "--tenant", tenant]))
        }
        for index in 0..<writes / 4 {
            commands.append(
                Command(arguments: [
                    "override", "set", overridden, "--user", "cli-o-\(index)", "--variation", "Group A", "--tenant",
                    tenant,
                ]))
        }
        for index in 0..<writes * 3 / 20 {
            commands.append(
                Command(arguments: [
                    "unlock", unlockFlag, "--user", "cli-u-\(index)", "--source", "cli", "--tenant", tenant,
                ]))
        }
        for index in 0..<writes / 10 {
            let tag = "cli-toggle-\(index)"
            commands.append(
                Command(
                    arguments: [
                        "feature", index % 2 == 0 ? "disable" : "enable", "Example Development Flag", "--tenant",
                        tenant, "--message", tag, "--json",
                    ],
                    toggle: WriteLedger.Entry(tag: tag, environment: "production", write: .edit)))
        }
        return commands
    }

    struct Request {
        var write: Write
        var config: String
        var output: URL
    }

    /// The same mix over HTTP: its own users, the other variation, another flag to toggle.
    static func requestWrites(_ writes: Int, server: ServerProcess, key: String, in directory: URL) throws -> [Request]
    {
        let responses = directory.appendingPathComponent("responses")
        try FileManager.default.createDirectory(at: responses, withIntermediateDirectories: true)
        let base = "\(server.baseURL)/api/v1/tenants/\(tenant)/environments/production/features"
        func request(
            _ label: String, _ method: String, _ path: String, _ body: String, toggle: WriteLedger.Entry? = nil
        ) -> Request {
            let output = responses.appendingPathComponent("\(label).json")
            let escaped = body.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            return Request(
                write: Write(label: label, toggle: toggle),
                config: """
                    url = "\(base)/\(path)"
                    request = "\(method)"
                    header = "Authorization: Bearer \(key)"
                    header = "Content-Type: application/json"
                    data-binary = "\(escaped)"
                    output = "\(output.path)"
                    write-out = "%{http_code} %{filename_effective}\\n"

                    """, output: output)
        }
        var requests: [Request] = []
        for index in 0..<writes / 2 {
            requests.append(
                request(
                    "srv-a-\(index)", "POST", "Example%20MVT%20Test/assignments", #"{"users": ["srv-a-\#(index)"]}"#))
        }
        for index in 0..<writes / 4 {
            requests.append(
                request(
                    "srv-o-\(index)", "PUT", "Example%20A%2FB%20Test/overrides/srv-o-\(index)",
                    #"{"variation": "Group B"}"#))
        }
        for index in 0..<writes * 3 / 20 {
            requests.append(
                request(
                    "srv-u-\(index)", "PUT", "Example%20Unlock%20Flag/unlocks/srv-u-\(index)", #"{"source": "srv"}"#))
        }
        for index in 0..<writes / 10 {
            let tag = "srv-toggle-\(index)"
            requests.append(
                request(
                    tag, "POST", "Example%20Feature%20Flag/\(index % 2 == 0 ? "disable" : "enable")",
                    #"{"message": "\#(tag)"}"#,
                    toggle: WriteLedger.Entry(tag: tag, environment: "production", write: .edit)))
        }
        return requests
    }

    /// Marks a toggle acknowledged with the revision it answered, or as unchanged (the flag
    /// already had that state: the other toggles of its side raced it).
    static func acknowledge(_ entry: inout WriteLedger.Entry, answer: String) {
        entry.isAcknowledged = true
        let object = (try? JSONSerialization.jsonObject(with: Data(answer.utf8))) as? [String: Any]
        entry.isUnchanged = object?["unchanged"] as? Bool ?? false
        entry.revision = entry.isUnchanged ? nil : object?["revision"] as? Int
    }

    /// How many commands have run, and their results once all have.
    final class Progress: Sendable {
        private let count = Atomic<Int>(0)
        private let state = Mutex<(results: [CLI.Result], at: Date)?>(nil)

        var done: Int { count.load(ordering: .relaxed) }

        var result: (results: [CLI.Result], at: Date)? { state.withLock { $0 } }

        func advance() {
            count.add(1, ordering: .relaxed)
        }

        func finish(_ results: [CLI.Result]) {
            state.withLock { $0 = (results, Date()) }
        }
    }

    /// Runs every command, `workers` at a time, and returns their results in order.
    static func runAll(_ commands: [[String]], on cli: CLI, workers: Int, progress: Progress) -> [CLI.Result] {
        let results = Mutex<[Int: CLI.Result]>([:])
        let next = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while true {
                let index = next.add(1, ordering: .relaxed).oldValue
                guard index < commands.count else { return }
                let result =
                    (try? cli.runBinary(commands[index]))
                    ?? CLI.Result(status: -1, stdout: [], stderr: Array("could not start".utf8))
                results.withLock { $0[index] = result }
                progress.advance()
            }
        }
        return results.withLock { results in commands.indices.map { results[$0]! } }
    }
}
