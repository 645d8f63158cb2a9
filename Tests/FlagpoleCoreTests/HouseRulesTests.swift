import FlagpoleTestSupport
import Foundation
import Testing

/// The house rules of `docs/CONTRIBUTING.md` that a reader would otherwise have to police: these
/// read the sources and the docs, and fail naming the file and line that breaks a rule, so a rule
/// holds the day after it was written as well as the day it was.
@Suite("House rules hold")
struct HouseRulesTests {
    /// Every Swift file under `Sources/<folder>`, by its path under `Sources/`.
    static func sources(in folder: String = "") throws -> [(path: String, text: String)] {
        try RepositorySources.swiftFiles(under: "Sources").filter { folder.isEmpty || $0.path.hasPrefix(folder + "/") }
    }

    /// A route registered with its handler written in place (`router.get("path") { … }`, or
    /// `use: { … }`) rather than named: a handler is a method, found by its name and read on its own.
    static var inlineHandler: Regex<AnyRegexOutput> {
        try! Regex(#"\.(?:get|post|put|patch|delete|head|on)\s*\(\s*"[^"\n]*"[^{}()\n]*\)\s*\{|\buse:\s*\{"#)
    }

    @Test("Every route's handler is a named method, in the server and the dashboard")
    func routeHandlersAreNamed() throws {
        for (path, text) in try Self.sources(in: "FlagpoleServer") {
            for (number, line) in RepositorySources.codeLines(text) where line.contains(Self.inlineHandler) {
                Issue.record(
                    "\(path):\(number) registers a route with its handler in place; name it: \(line.trimmingCharacters(in: .whitespaces))"
                )
            }
        }
    }

    @Test(
        "The route check sees what it looks for",
        arguments: [
            (#"reader.get("ramps") { _, context -> Response in"#, true),
            (#"editor.on("features/:feature/unlocks/:user", method: method) { request, context in"#, true),
            (#"    .post("/t/:tenant/:env/events") {"#, true),
            (#"editor.post("ramp/\(action.rawValue)", use: { request, context in"#, true),
            (#"editor.post("features/:feature/ramp", use: createRamp)"#, false),
            (#"switch parameters.get(key) {"#, false),
            (#"if context.parameters.get("tenant") != nil, let path = try? context.environmentPath() {"#, false),
        ])
    func detectsInlineHandlers(line: String, isInline: Bool) {
        #expect(line.contains(Self.inlineHandler) == isInline)
    }

    /// Where GRDB may be imported: SQLite's side of the store, one folder.
    static let sqliteFolder = "FlagpoleStore/Database/SQLite/"

    @Test("GRDB is imported under FlagpoleStore/Database/SQLite/ only")
    func grdbStaysInItsFolder() throws {
        for (path, text) in try Self.sources() where !path.hasPrefix(Self.sqliteFolder) {
            for (number, line) in RepositorySources.codeLines(text) where line.hasPrefix("import GRDB") {
                Issue.record("\(path):\(number) imports GRDB outside \(Self.sqliteFolder)")
            }
        }
    }

    @Test("A file under Commands/ holds the command it is named after")
    func commandFilesHoldTheirCommand() throws {
        let commands = try Self.sources(in: "FlagpoleCommands/Commands")
        #expect(!commands.isEmpty)
        for (path, text) in commands {
            let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
            #expect(
                text.contains(try Regex(#"struct \#(name)\s*:[^{]*\b(?:Async)?ParsableCommand\b"#)),
                "\(path) does not declare the command \(name)")
        }
    }

    /// The error enums `docs/ARCHITECTURE.md` names in its "Errors" entry, before the server's own.
    static func documentedErrors() throws -> Set<String> {
        let architecture = try String(
            contentsOf: RepositorySources.root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let start = try #require(architecture.range(of: "- **Errors.**"))
        let end = try #require(
            architecture.range(of: "The server's own error types", range: start.upperBound..<architecture.endIndex))
        let entry = architecture[start.upperBound..<end.lowerBound]
        return Set(entry.matches(of: #/`([A-Za-z]+Error)`/#).map { String($0.output.1) }).subtracting(["FlagpoleError"])
    }

    @Test("docs/ARCHITECTURE.md names every FlagpoleError enum of the code, and no other")
    func errorListIsTheCodes() throws {
        let declaration = #/enum ([A-Za-z]+Error)\s*:[^{]*\bFlagpoleError\b/#
        let declared = Set(try Self.sources().flatMap { $0.text.matches(of: declaration).map { String($0.output.1) } })
        #expect(declared.count >= 15)
        let documented = try Self.documentedErrors()
        #expect(
            declared.subtracting(documented).isEmpty,
            "not in docs/ARCHITECTURE.md's Errors entry: \(declared.subtracting(documented).sorted())")
        #expect(
            documented.subtracting(declared).isEmpty,
            "in docs/ARCHITECTURE.md but not a FlagpoleError enum: \(documented.subtracting(declared).sorted())")
    }
}
