/// Diagnostics found while walking a file, placed by byte offset until the end, when one
/// line table turns all offsets into lines and columns (valid files never build it).
struct PendingDiagnostics {
    private struct Pending {
        var code: DiagnosticCode
        var feature: String?
        var pointer: JSONPointer
        var offset: Int?
        var message: String
        var fix: String
    }

    /// How many diagnostics of one code are listed; the rest are counted in one more.
    ///
    /// A 400 kB file can hold 200 000 bad elements (`[1,1,1,…]`): listed one by one, their
    /// messages would take hundreds of times the file's size in memory and in a response.
    static let maximumPerCode = 100

    private var pending: [Pending] = []
    /// Per code: how many were listed, and the first one left out with how many were.
    private var listed: [DiagnosticCode: Int] = [:]
    private var omitted: [DiagnosticCode: (first: Pending, count: Int)] = [:]

    var hasErrors: Bool { pending.contains { $0.code.severity == .error } }

    mutating func add(
        _ code: DiagnosticCode, feature: String?, at pointer: JSONPointer, offset: Int?,
        _ message: String, fix: String
    ) {
        let diagnostic = Pending(
            code: code, feature: feature, pointer: pointer, offset: offset, message: message, fix: fix)
        guard listed[code, default: 0] < Self.maximumPerCode else {
            omitted[code, default: (diagnostic, 0)].count += 1
            return
        }
        listed[code, default: 0] += 1
        pending.append(diagnostic)
    }

    /// The diagnostics with their lines and columns in `bytes`.
    func located(in bytes: [UInt8]) -> [Diagnostic] {
        guard !pending.isEmpty else { return [] }
        var pending = pending
        for (code, omission) in omitted.sorted(by: { $0.key < $1.key }) {
            var summary = omission.first
            summary.message =
                "this and \(omission.count - 1) more \(code.rawValue) problems are not listed one by one (the first \(Self.maximumPerCode) are): \(summary.message)"
            summary.fix = "fix the ones listed, then validate again to list the rest"
            pending.append(summary)
        }
        var locations = SourceLocator(bytes).locations(of: pending.compactMap(\.offset)).makeIterator()
        return pending.map {
            Diagnostic(
                $0.code, feature: $0.feature, pointer: $0.pointer,
                location: $0.offset == nil ? nil : locations.next(), message: $0.message, fix: $0.fix)
        }
    }
}
