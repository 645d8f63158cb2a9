import ArgumentParser
import FlagpoleCore
import FlagpoleStore
import Foundation

/// `flagpole bench …`: in-process measurements for Scripts/bench, where a process per
/// operation would measure process start-up instead. Hidden from help.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measurements for Scripts/bench.",
        shouldDisplay: false,
        subcommands: [Points.self, History.self])

    struct Points: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Points computed per second on one core.")

        @Option(help: "How many points.")
        var count = 20_000_000

        func run() {
            let points = UserPoints(salt: "40a05e6457ef4bfc88eec2df806d21fc")
            // Ids built beforehand, as a users file would give them: only the points are timed.
            let users = (0..<min(count, 1_000_000)).map { "user-\($0)" }
            var checksum = 0.0
            let clock = ContinuousClock()
            let elapsed = clock.measure {
                for index in 0..<count {
                    checksum += points.point(for: users[index % users.count])
                }
            }
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            Console.json([
                "points": .number(Double(count)),
                "seconds": .number(seconds),
                "perSecond": .number((Double(count) / seconds).rounded()),
                // Printed so the loop can't be optimised away.
                "checksum": .number(checksum),
            ])
        }
    }

    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Latency of a user's history query, through the store.")

        @Option(help: ArgumentHelp("User ids to query, one per line.", valueName: "file"))
        var usersFile: String

        @Option(help: "Events per query.")
        var limit = 100

        @OptionGroup var environment: EnvironmentOptions
        @OptionGroup var database: DatabaseOptions

        func run() async throws {
            let users = try AssignCommand.readUsers(InputFile(argument: usersFile))
            let store = try database.openStore(.readOnly)
            let path = try environment.path()
            let clock = ContinuousClock()
            var latencies: [Double] = []
            var events = 0
            for user in users {
                let start = clock.now
                events += try await store.assignmentEvents(
                    in: path, matching: AssignmentEventQuery(user: user, limit: limit)
                ).count
                let elapsed = clock.now - start
                latencies.append(
                    Double(elapsed.components.attoseconds) / 1e12 + Double(elapsed.components.seconds) * 1e6)
            }
            latencies.sort()
            func percentile(_ p: Double) -> Double {
                latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
            }
            Console.json([
                "queries": .number(Double(users.count)),
                "events": .number(Double(events)),
                "p50Microseconds": .number(percentile(0.5).rounded()),
                "p99Microseconds": .number(percentile(0.99).rounded()),
            ])
        }
    }
}
