import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import Hummingbird

/// A request's JSON body, read as the API reads every body: an object whose keys are all known,
/// each of the type its endpoint expects. A syntax error is a `400` naming the line and column;
/// a wrong or missing field is a `422` naming its JSON pointer.
struct JSONBody {
    let object: JSONObject

    /// Reads at most `limit` bytes of `request`'s body; an empty body reads as `{}`.
    init(_ request: Request, limit: Int, allowed: Set<String>) async throws {
        let buffer = try await request.body.collect(upTo: limit)
        let bytes = Array(buffer.readableBytesView)
        guard !bytes.isEmpty else {
            object = [:]
            return
        }
        guard case .object(let members) = try Self.parse(bytes).value else {
            throw APIError.malformed("The body must be a JSON object, like {\"dryRun\": true}.")
        }
        if let unknown = members.keys.first(where: { !allowed.contains($0) }) {
            throw APIError.invalid(
                "Unknown field \"\(unknown)\". This endpoint takes: \(allowed.sorted().joined(separator: ", ")).",
                pointer: "/\(unknown)")
        }
        object = members
    }

    /// `bytes` as JSON; `400 malformed` with the line and column when they are not JSON, which is
    /// the client's mistake in the request itself, not in what it asks for (`422`).
    static func parse(_ bytes: [UInt8]) throws -> JSONNode {
        do {
            return try JSONParser.parse(bytes)
        } catch {
            let location = SourceLocator(bytes).location(of: error.offset)
            throw APIError.malformed(
                "The body is not valid JSON at line \(location.line), column \(location.column): \(error.message) \(error.fix)",
                details: ["line": .number(Double(location.line)), "column": .number(Double(location.column))])
        }
    }

    /// Whether the body gives `key` a value other than `null`.
    func has(_ key: String) -> Bool {
        object[key] != nil && object[key] != .null
    }

    func string(_ key: String) throws -> String? {
        switch object[key] {
        case nil, .null: nil
        case .string(let value): value
        default: throw APIError.invalid("\"\(key)\" must be a string.", pointer: "/\(key)")
        }
    }

    func requiredString(_ key: String) throws -> String {
        guard let value = try string(key) else { throw APIError.invalid("\"\(key)\" is required.", pointer: "/\(key)") }
        return value
    }

    func bool(_ key: String) throws -> Bool {
        switch object[key] {
        case nil, .null: false
        case .bool(let value): value
        default: throw APIError.invalid("\"\(key)\" must be true or false.", pointer: "/\(key)")
        }
    }

    func requiredBool(_ key: String) throws -> Bool {
        guard case .bool(let value) = object[key] else {
            throw APIError.invalid("\"\(key)\" must be true or false.", pointer: "/\(key)")
        }
        return value
    }

    func requiredInt(_ key: String) throws -> Int {
        guard case .number(let value) = object[key], let int = Int(exactly: value) else {
            throw APIError.invalid("\"\(key)\" must be an integer.", pointer: "/\(key)")
        }
        return int
    }

    func numbers(_ key: String) throws -> [Double] {
        try array(key, of: ("a number", "numbers")) { if case .number(let value) = $0 { value } else { nil } }
    }

    func strings(_ key: String) throws -> [String] {
        try array(key, of: ("a string", "strings")) { if case .string(let value) = $0 { value } else { nil } }
    }

    /// The array at `key`, each element read by `element` (`nil`: the wrong type).
    private func array<Element>(
        _ key: String, of kind: (one: String, many: String), _ element: (JSONValue) -> Element?
    ) throws -> [Element] {
        guard case .array(let items) = object[key] else {
            throw APIError.invalid("\"\(key)\" must be an array of \(kind.many).", pointer: "/\(key)")
        }
        return try items.enumerated().map { index, item in
            guard let value = element(item) else {
                throw APIError.invalid("\"\(key)\"[\(index)] must be \(kind.one).", pointer: "/\(key)/\(index)")
            }
            return value
        }
    }
}

/// Query parameters, checked as strictly as bodies.
struct Query {
    let parameters: Parameters

    init(_ request: Request) {
        self.init(parameters: request.uri.queryParameters)
    }

    /// Hummingbird percent-decodes a parameter's value but not its name: names are decoded here
    /// the same way, so that `attr.st%C3%A4dte=…` (as `URLComponents` writes it) is the attribute
    /// `städte`. A `+` stays a plus in both, as RFC 3986 has it (a space is `%20`, not form
    /// encoding's `+`); a name that doesn't decode is kept as sent, as a value is.
    init(parameters: Parameters) {
        guard parameters.contains(where: { $0.key.contains("%") }) else {
            self.parameters = parameters
            return
        }
        self.parameters = Parameters(
            parameters.map { (key: $0.key.removingPercentEncoding.map { Substring($0) } ?? $0.key, value: $0.value) })
    }

    func string(_ key: String) -> String? {
        parameters.get(key)
    }

    func int(_ key: String) throws -> Int? {
        guard let text = parameters.get(key) else { return nil }
        guard let value = Int(text) else {
            throw APIError.invalid("Query parameter \"\(key)\" must be an integer, not \"\(text)\".")
        }
        return value
    }

    func bool(_ key: String) throws -> Bool {
        switch parameters.get(key) {
        case nil, "false", "0": false
        case "", "true", "1": true
        case let text?: throw APIError.invalid("Query parameter \"\(key)\" must be true or false, not \"\(text)\".")
        }
    }

    func time(_ key: String) throws -> Date? {
        guard let text = parameters.get(key) else { return nil }
        if let date = TimeText.date(from: text) { return date }
        throw APIError.invalid(
            "Query parameter \"\(key)\" must be an ISO 8601 time, like \(TimeText.examples), not \"\(text)\".")
    }

    /// A content hash from the query: 32 to 64 hex digits, the start of a SHA-256 (an ETag's
    /// 32 digits will do), lowercased.
    func sha256(_ key: String = "sha256") throws -> String? {
        guard let text = parameters.get(key) else { return nil }
        guard (32...64).contains(text.utf8.count), text.allSatisfy(\.isHexDigit) else {
            throw APIError.malformed(
                "Query parameter \"\(key)\" must be 32 to 64 hex digits of a SHA-256, as Content-Location and the ETag give them, not \"\(text)\"."
            )
        }
        return text.lowercased()
    }

    /// A tag to filter by (`?tag=ios`).
    func tag() throws -> String? {
        guard let text = parameters.get("tag") else { return nil }
        guard ConfigsDecoder.isValidTag(text) else {
            throw APIError.invalid(
                "Query parameter \"tag\" must be a tag: 1 to 64 characters, without commas or spaces at either end.")
        }
        return text
    }

    /// The `attr.NAME=VALUE` parameters, as a user's attributes; `nil` when there are none.
    /// `422` for a name that can't be one or too many of them, `413` for too many bytes.
    func attributes(limits: UserAttributes.Limits) throws -> UserAttributes? {
        let pairs = parameters.filter { $0.key.hasPrefix(UserAttributes.queryPrefix) }.map {
            (key: String($0.key), value: String($0.value))
        }
        guard !pairs.isEmpty else { return nil }
        do {
            return try UserAttributes(query: pairs, limits: limits)
        } catch {
            throw APIError.attributes(error)
        }
    }

    /// A user id from the query: `400` with the rule it breaks when it could not be one (empty,
    /// over 256 bytes, a control character).
    func user(_ key: String = "user") throws -> UserID? {
        guard let text = parameters.get(key) else { return nil }
        do {
            return try UserID(validating: text)
        } catch {
            throw APIError.malformed(
                "Query parameter \"\(key)\": \(error) Send the id the app's backend knows the user by, percent-encoded.",
                details: ["parameter": .string(key)])
        }
    }
}

extension Request {
    /// The revision named by `If-Match` (`3` or `"3"`), if any.
    func expectedRevision() throws -> Int? {
        guard let value = headers[.ifMatch] else { return nil }
        let trimmed = value.trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        guard let revision = Int(trimmed), revision >= 0 else {
            throw APIError.malformed("If-Match must be a revision number, like If-Match: 3, not \(value).")
        }
        return revision
    }
}
