/// The meaning of a `type` object, read as the client reads it.
public enum FeatureType: Hashable, Sendable {
    /// `{"feature-flag": "<any string>"}`
    case featureFlag
    /// `{"feature-test": "ab" | "featureFlagAB" | "mvt"}`
    case featureTest(TestKind)

    /// The test kinds the client knows.
    public enum TestKind: String, Hashable, Sendable, CaseIterable {
        case ab
        case featureFlagAB
        case mvt
    }

    /// Reads a `type` object; `nil` when the client would reject the whole document.
    ///
    /// The client first tries `feature-flag` as a string, and only when that fails reads
    /// `feature-test`; other keys are ignored.
    public init?(_ object: JSONObject) {
        if case .string = object["feature-flag"] {
            self = .featureFlag
        } else if case .string(let raw) = object["feature-test"], let kind = TestKind(rawValue: raw) {
            self = .featureTest(kind)
        } else {
            return nil
        }
    }
}
