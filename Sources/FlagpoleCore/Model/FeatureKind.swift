/// What a feature is to the app, derived from its keys (FORMAT.md §3).
public enum FeatureKind: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case flag = "flag"
    case developmentFlag = "development-flag"
    case unlockFlag = "unlock-flag"
    case abTest = "ab-test"
    case onOffABTest = "on-off-ab-test"
    case mvtTest = "mvt-test"

    /// Whether users are split between variations by their point.
    public var isTest: Bool {
        switch self {
        case .abTest, .onOffABTest, .mvtTest: true
        case .flag, .developmentFlag, .unlockFlag: false
        }
    }

    /// The name the client's debug screen uses.
    public var description: String {
        switch self {
        case .flag: "Feature Flag"
        case .developmentFlag: "Development Flag"
        case .unlockFlag: "Unlock Flag"
        case .abTest: "A/B Test"
        case .onOffABTest: "Feature On/Off A/B Test"
        case .mvtTest: "MVT Test"
        }
    }

    /// The name with its indefinite article, for sentences: "an A/B Test", "a Feature Flag".
    public var withArticle: String {
        let article =
            switch self {
            case .abTest, .mvtTest, .unlockFlag: "an"
            case .flag, .developmentFlag, .onOffABTest: "a"
            }
        return "\(article) \(description)"
    }
}
