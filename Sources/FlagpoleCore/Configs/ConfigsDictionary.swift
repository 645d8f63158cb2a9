/// The dictionary SwiftFeatureConfigs' `loadInMemoryFeatures` takes, as JSON: one member per
/// config, each value written as its type demands (see `ConfigValue`), one member per line.
public enum ConfigsDictionary {
    public static func rendered(_ entries: [(key: String, value: ConfigValue)]) -> [UInt8] {
        guard !entries.isEmpty else { return Array("{}\n".utf8) }
        var output: [UInt8] = [UInt8(ascii: "{")]
        for (index, entry) in entries.enumerated() {
            output.append(contentsOf: (index == 0 ? "\n    " : ",\n    ").utf8)
            JSONWriter.writeString(entry.key, into: &output)
            output.append(contentsOf: ": ".utf8)
            entry.value.writeJSON(into: &output)
        }
        output.append(contentsOf: "\n}\n".utf8)
        return output
    }
}
