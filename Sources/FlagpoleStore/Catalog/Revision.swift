import FlagpoleCore
import Foundation

/// What a revision says it is for: a reason given with the change, or the store's own words
/// for one given none. An environment marked "changes need a reason" refuses the latter
/// (`DocumentError.reasonRequired`), whichever way the change came in.
public struct RevisionMessage: Hashable, Sendable {
    public var text: String
    /// Whether it came with the change: from a person (`--message`, the API's `message`, the
    /// dashboard's Reason), or from the mechanism that writes it (a ramp's step, a trigger).
    public var isGiven: Bool

    /// `given` when it holds more than blanks, else the store's `generated` words.
    public init(_ given: String?, else generated: String) {
        if let given, !given.allSatisfy(\.isWhitespace) {
            (text, isGiven) = (given, true)
        } else {
            (text, isGiven) = (generated, false)
        }
    }
}

/// What kind of change made a revision.
public enum RevisionKind: String, Hashable, Sendable {
    case `import`, edit, bias, rollout, rollback
}

/// One revision of an environment, without its document.
public struct RevisionSummary: Hashable, Sendable {
    public var number: Int
    public var kind: RevisionKind
    public var actor: String
    public var message: String
    public var createdAt: Date
    /// The size of the rendered document, in bytes.
    public var size: Int
    /// How many audit rows (changed fields, added or removed features) it has.
    public var changeCount: Int
}

/// One revision of an environment with its rendered features.json.
public struct Revision: Hashable, Sendable {
    public var path: EnvironmentPath
    public var number: Int
    public var createdAt: Date
    /// The export bytes, in the default 4-space layout.
    public var document: [UInt8]

    /// Revision `number` of the environment at `path`, with its export bytes.
    public init(path: EnvironmentPath, number: Int, createdAt: Date, document: [UInt8]) {
        self.path = path
        self.number = number
        self.createdAt = createdAt
        self.document = document
    }

    /// The document in `style`: the stored bytes for the default layout, otherwise the same
    /// JSON re-laid out (the stored document is already canonical, so no re-validation).
    public func document(_ style: JSONWriter.Style) throws -> [UInt8] {
        if case .pretty(indent: 4) = style { return document }
        do {
            return JSONWriter(style: style).bytes(of: try JSONParser.parse(document).value)
        } catch {
            throw StorageError.storage(reason: "revision \(number) of \(path) is damaged: \(error.message)")
        }
    }
}

/// A revision as a CDN serves it: its features.json and its configs.json for a client that names
/// no user, with the environment's delivery settings.
public struct PublishedRevision: Hashable, Sendable {
    public var path: EnvironmentPath
    public var number: Int
    public var createdAt: Date
    public var features: [UInt8]
    public var configs: [UInt8]
    public var settings: DeliverySettings

    public init(
        path: EnvironmentPath, number: Int, createdAt: Date, features: [UInt8], configs: [UInt8],
        settings: DeliverySettings = DeliverySettings()
    ) {
        self.path = path
        self.number = number
        self.createdAt = createdAt
        self.features = features
        self.configs = configs
        self.settings = settings
    }
}

/// The current state of an environment.
public struct EnvironmentSnapshot: Hashable, Sendable {
    public var path: EnvironmentPath
    /// The current revision; `nil` until the first import.
    public var revision: Int?
    public var document: FeaturesDocument
}
