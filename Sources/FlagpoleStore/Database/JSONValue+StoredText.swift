import FlagpoleCore

extension JSONValue {
    /// Reads JSON the store wrote itself.
    ///
    /// - throws: `StorageError.storage` when the text is not JSON: the file was edited by hand.
    init(storedText text: String) throws {
        do {
            self = try JSONParser.parse(
                Array(text.utf8), maximumDepth: JSONParser.maximumDepth + JSONParser.storedDepthAllowance
            ).value
        } catch {
            throw StorageError.storage(reason: "stored JSON is damaged (\(error.message)): \(text.prefix(60))")
        }
    }

    /// The compact text the store keeps.
    var storedText: String {
        JSONWriter(style: .compact).string(of: self)
    }
}

extension JSONObject {
    init(storedText text: String) throws {
        guard case .object(let object) = try JSONValue(storedText: text) else {
            throw StorageError.storage(reason: "a stored JSON object is not an object: \(text.prefix(60))")
        }
        self = object
    }
}
