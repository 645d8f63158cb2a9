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

    private var pending: [Pending] = []

    var hasErrors: Bool { pending.contains { $0.code.severity == .error } }

    mutating func add(
        _ code: DiagnosticCode, feature: String?, at pointer: JSONPointer, offset: Int?,
        _ message: String, fix: String
    ) {
        pending.append(Pending(code: code, feature: feature, pointer: pointer, offset: offset, message: message, fix: fix))
    }

    /// The diagnostics with their lines and columns in `bytes`.
    func located(in bytes: [UInt8]) -> [Diagnostic] {
        guard !pending.isEmpty else { return [] }
        let locator = SourceLocator(bytes)
        return pending.map {
            Diagnostic(
                $0.code, feature: $0.feature, pointer: $0.pointer,
                location: $0.offset.map(locator.location(of:)), message: $0.message, fix: $0.fix)
        }
    }
}
