/// What SwiftFeatureConfigs' declaration file (`featureConfigs.json`) says of a config, kept with
/// it from the declaration import on: the Swift type the app reads the value as, and the default
/// and documentation it declares.
///
/// The type is what matters: the app reads `inMemory[key] as? T` and skips a value of another
/// type without a word, so a config declared `Int` that is served as a string shows every user
/// the compiled default. The declared default tells a value the team edited (it differs) from
/// one nobody touched (it doesn't), so a re-import can follow a changed declaration without
/// undoing the team's work.
public struct ConfigDeclaration: Hashable, Sendable {
    public var type: DeclaredType
    /// The declared default, read as `type`'s config type.
    public var defaultValue: ConfigValue
    /// The declaration's `doc`.
    public var doc: String?
    /// The declaration file no longer declares the config: it is still served (installed apps
    /// may read it), and marked so.
    public var isWithdrawn: Bool

    public init(type: DeclaredType, defaultValue: ConfigValue, doc: String? = nil, isWithdrawn: Bool = false) {
        self.type = type
        self.defaultValue = defaultValue
        self.doc = doc
        self.isWithdrawn = isWithdrawn
    }

    /// `{"type", "default", "doc"?, "withdrawn"?}`, as a configs file writes it under `declared`.
    public var jsonObject: JSONObject {
        var object: JSONObject = ["type": .string(type.rawValue), "default": defaultValue.jsonValue]
        if let doc { object.append("doc", .string(doc)) }
        if isWithdrawn { object.append("withdrawn", .bool(true)) }
        return object
    }
}

/// The Swift types SwiftFeatureConfigs' generator declares.
public enum DeclaredType: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    case bool = "Bool"
    case int = "Int"
    case float = "Float"
    case double = "Double"
    case string = "String"

    public var description: String { rawValue }

    /// The config type that holds it: `Float` and `Double` are both `double`.
    public var configType: ConfigType {
        switch self {
        case .bool: .bool
        case .int: .int
        case .float, .double: .double
        case .string: .string
        }
    }

    /// Why an app that declares this type ignores `value`, or `nil` when it reads it.
    ///
    /// A value of another config type is skipped by `as? T`. A `Float` takes a number only when a
    /// `Float` holds it exactly: the app's `NSNumber(value: 0.1) as? Float` is `nil`, on Apple's
    /// Foundation as on Linux, while `0.5` casts.
    public func problem(with value: ConfigValue) -> String? {
        guard value.type == configType else {
            return
                "the app declares it \(rawValue) and reads it with `as? \(rawValue)`, which skips \(value.type.withArticle) without a word: users would get the compiled default"
        }
        if self == .float, case .double(let number) = value, Double(Float(number)) != number {
            return
                "the app declares it Float, and `as? Float` skips \(ConfigValue.format(number)), which a Float does not hold exactly: users would get the compiled default"
        }
        return nil
    }
}
