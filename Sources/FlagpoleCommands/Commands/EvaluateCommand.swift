import ArgumentParser
import FlagpoleCore
import FlagpoleServer
import FlagpoleStore

/// `flagpole evaluate`: every flag (or one) as an OpenFeature client receives it over OFREP, or
/// as the Bucketeer SDK receives it from `get_evaluations`.
struct EvaluateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evaluate",
        abstract: "Evaluate the environment's features and configs for a user, as OpenFeature clients receive them.",
        discussion: """
            The same evaluation as OFREP: a value, the variant it comes from, the reason and the revision. A user's \
            first assignments are recorded, as by their app's first fetch, so the answer stays theirs. With \
            --client bucketeer, what `POST …/get_evaluations` answers a Bucketeer app with no answer yet: values as \
            text, the SDK's reasons, and (with --json) the body itself.
            """)

    /// Whose answer to print.
    enum Client: String, ExpressibleByArgument, CaseIterable {
        case openfeature
        case bucketeer
    }

    @Option(help: "openfeature (OFREP) or bucketeer (the Bucketeer SDK's get_evaluations).")
    var client = Client.openfeature

    @OptionGroup var environment: EnvironmentOptions

    @Option(help: ArgumentHelp("The user's id (OpenFeature's targetingKey).", valueName: "id"))
    var user: String?

    @Option(help: ArgumentHelp("Only this feature or config.", valueName: "key"))
    var flag: String?

    @Option(help: ArgumentHelp("Only the flags tagged so.", valueName: "tag"))
    var tag: String?

    @Flag(help: "As a debug build: development flags are on.")
    var development = false

    @Option(
        name: .customLong("attr"),
        help: ArgumentHelp(
            "An attribute of the user that rules read, as text, as a query parameter carries it (repeatable); without any, rules read the user's last attributes on record.",
            valueName: "name=value"))
    var attributes: [String] = []

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        _ = try user.map(UserOptions.id)
        if flag != nil && tag != nil { throw ValidationError("--tag filters all flags: drop it with --flag.") }
        if !attributes.isEmpty && user == nil { throw ValidationError("--attr describes a user: add --user ID.") }
        if client == .bucketeer {
            if user == nil { throw ValidationError("The Bucketeer SDK always names its user: add --user ID.") }
            if flag != nil { throw ValidationError("get_evaluations answers every flag: drop --flag, or use --tag.") }
            if development { throw ValidationError("A Bucketeer app is a release build: drop --development.") }
        }
        _ = try userAttributes()
    }

    /// `--attr NAME=VALUE`, each value a string, as a query parameter's is (`appVersion=5.10`
    /// stays `"5.10"`, `zip=007` stays `"007"`): the operators read numbers, versions, times and
    /// booleans from strings. `nil` without any.
    private func userAttributes() throws -> UserAttributes? {
        guard !attributes.isEmpty else { return nil }
        var pairs: [(key: String, value: String)] = []
        for pair in attributes {
            guard let equals = pair.firstIndex(of: "=") else {
                throw ValidationError("--attr \(pair): write NAME=VALUE, like --attr country=DE.")
            }
            pairs.append(
                (UserAttributes.queryPrefix + pair[..<equals], String(pair[pair.index(after: equals)...])))
        }
        do {
            return try UserAttributes(query: pairs)
        } catch {
            throw ValidationError("--attr: \(error).")
        }
    }

    func run() async throws {
        let path = try environment.path()
        let store = try await database.openStore(user == nil ? .readOnly : .readWrite)
        // A Bucketeer app always sends its attributes: none is none, not the last on record.
        let context = FlagContext(
            user: try user.map(UserOptions.id), isDevelopment: development,
            attributes: try userAttributes() ?? (client == .bucketeer ? .empty : nil))
        if let flag {
            do {
                let evaluation = try await store.assignments.evaluateFlag(flag, for: context, in: path)
                if output.json {
                    var bytes: [UInt8] = []
                    evaluation.writeJSON(into: &bytes)
                    Console.out(bytes: bytes + [UInt8(ascii: "\n")])
                } else {
                    Console.out(Self.table([.success(evaluation)]))
                }
            } catch let problem as FlagProblem {
                if output.json { Console.json(problem.jsonValue) }
                throw CommandFailure("\(problem.code): \(problem.details)")
            }
            return
        }
        let evaluations = try await store.assignments.evaluateFlags(for: context, tag: tag, in: path)
        if client == .bucketeer {
            return printBucketeer(evaluations, for: context)
        }
        if output.json {
            var bytes = Array(#"{"flags":["#.utf8)
            for (index, result) in evaluations.flags.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                switch result {
                case .success(let evaluation): evaluation.writeJSON(into: &bytes)
                case .failure(let problem): bytes += JSONWriter(style: .compact).bytes(of: problem.jsonValue)
                }
            }
            bytes += Array(#"],"metadata":{"revision":\#(evaluations.revision)}}"#.utf8) + [UInt8(ascii: "\n")]
            Console.out(bytes: bytes)
        } else {
            Console.out("revision \(evaluations.revision)\(user.map { "  ·  user \($0)" } ?? "  ·  no user")")
            Console.out(Self.table(evaluations.flags))
        }
    }

    /// What `get_evaluations` answers for `context`: its body with --json, else a table.
    private func printBucketeer(_ evaluations: FlagEvaluations, for context: FlagContext) {
        let request = BucketeerEvaluationsRequest(
            user: context.user!, attributes: context.attributes ?? .empty, tag: tag ?? "")
        if output.json {
            Console.out(bytes: BucketeerEvaluationsAnswer.answer(evaluations, for: request, isRecorded: true) + [10])
            return
        }
        Console.out("revision \(evaluations.revision)  ·  user \(request.user)  ·  as the Bucketeer SDK gets it")
        var table = TextTable("FEATURE ID", "VARIATION VALUE", "VARIATION ID", "REASON", "RULE ID")
        for case .success(let flag) in evaluations.flags {
            let reason = BucketeerReason(flag)
            table.append(flag.key, flag.value.text, flag.variant, reason.type, reason.ruleID)
        }
        Console.out(table.text)
    }

    private static func table(_ flags: [Result<FlagEvaluation, FlagProblem>]) -> String {
        var table = TextTable("FLAG", "VALUE", "VARIANT", "REASON", "KIND", "RULE")
        for result in flags {
            switch result {
            case .success(let flag):
                table.append(
                    flag.key, flag.value.shown, flag.variant, flag.reason.rawValue, flag.kind,
                    flag.rule ?? "")
            case .failure(let problem):
                table.append(problem.key, "-", "-", problem.code, "", "")
            }
        }
        return table.text
    }
}
