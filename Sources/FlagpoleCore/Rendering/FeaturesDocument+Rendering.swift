extension FeaturesDocument {
    /// The export bytes: `{"features": [...]}` with the other top-level keys in place,
    /// every feature's keys in the stable export order. Equal documents give equal bytes.
    public func rendered(_ style: JSONWriter.Style = .pretty) -> [UInt8] {
        JSONWriter(style: style).bytes(of: jsonValue)
    }
}
