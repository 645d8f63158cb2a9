/// A features.json file as read by `DocumentDecoder`: the document when the client would
/// accept it, every diagnostic, and where each feature was written.
public struct DecodedDocument: Sendable {
    /// Where one feature of the document was written.
    struct FeatureSource: Sendable {
        var pointer: JSONPointer
        var node: JSONNode
    }

    /// The document; `nil` when any diagnostic is an error.
    public var document: FeaturesDocument?
    /// Every problem found, in file order.
    public var diagnostics: [Diagnostic]

    /// Where each feature of `document` was written, in the same order.
    let sources: [FeatureSource]
    let bytes: [UInt8]
    /// Where the features array is: `/features`, or the root for a bare array.
    public let featuresPointer: JSONPointer

    /// Whether the client would accept the file.
    public var isValid: Bool { !diagnostics.hasErrors }

    /// A problem with one feature of `document`, found by comparing it with something else.
    public struct Finding: Sendable {
        /// The feature's index in `document`.
        public var featureIndex: Int
        /// The key the problem is about; `nil` for the whole feature.
        public var key: String?
        /// The diagnostic to report.
        public var code: DiagnosticCode
        /// What is wrong, in one sentence.
        public var message: String
        /// How to fix it, in one sentence.
        public var fix: String

        /// Creates a finding about feature `featureIndex`, or its `key`.
        public init(featureIndex: Int, key: String?, code: DiagnosticCode, message: String, fix: String) {
            self.featureIndex = featureIndex
            self.key = key
            self.code = code
            self.message = message
            self.fix = fix
        }
    }

    /// Turns findings about features of `document` into diagnostics that point into the file.
    public func locate(_ findings: [Finding]) -> [Diagnostic] {
        var pending = PendingDiagnostics()
        for finding in findings {
            let source = sources[finding.featureIndex]
            let keyed = finding.key.flatMap { source.node.member($0) }
            pending.add(
                finding.code, feature: document?.features[finding.featureIndex].name,
                at: finding.key.map { source.pointer.appending($0) } ?? source.pointer,
                offset: keyed?.node.offset ?? source.node.offset, finding.message, fix: finding.fix)
        }
        return pending.located(in: bytes)
    }
}
