/// A tenant's slug: lowercase letters, digits and hyphens, as it appears in delivery URLs
/// and in the CDN tree (`{tenant}/{env}/features.json`).
public struct TenantSlug: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The name as written.
    public let rawValue: String

    /// Trusts `rawValue`; for values read back from the store.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Checks `text` against the slug rules.
    ///
    /// - throws: `CoreError.invalidSlug` saying which rule `text` breaks.
    public init(validating text: String) throws(CoreError) {
        try SlugRules.check(text, naming: "tenant slug")
        self.rawValue = text
    }

    /// The name itself.
    public var description: String { rawValue }
    /// Alphabetical order, as listings show names.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// An environment's name (`production`, `staging`, …), with the same rules as a tenant slug.
public struct EnvironmentName: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The name as written.
    public let rawValue: String

    /// The environment every tenant gets on creation.
    public static let production = EnvironmentName(rawValue: "production")

    /// Trusts `rawValue`; for values read back from the store.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Checks `text` against the slug rules.
    ///
    /// - throws: `CoreError.invalidSlug` saying which rule `text` breaks.
    public init(validating text: String) throws(CoreError) {
        try SlugRules.check(text, naming: "environment name")
        self.rawValue = text
    }

    /// The name itself.
    public var description: String { rawValue }
    /// Alphabetical order, as listings show names.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

enum SlugRules {
    static let maximumLength = 63

    static func check(_ text: String, naming kind: String) throws(CoreError) {
        let allowed = text.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-"
        }
        let reason: String? =
            if text.isEmpty {
                "it is empty"
            } else if text.count > maximumLength {
                "it is longer than \(maximumLength) characters"
            } else if !allowed {
                "it may contain only lowercase letters, digits and hyphens"
            } else if text.hasPrefix("-") || text.hasSuffix("-") {
                "it may not start or end with a hyphen"
            } else {
                nil
            }
        if let reason { throw CoreError.invalidSlug(kind: kind, value: text, reason: reason) }
    }
}
