import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import NIOCore

/// What an OFREP request asks for: the evaluation context of its body.
struct OFREPRequest {
    let context: FlagContext
    /// The context as sent, compact: a bulk ETag covers it, so one user never gets a `304` for
    /// another's flags.
    let contextBytes: [UInt8]

    /// Reads `{"context": {"targetingKey": "…", "development": true, …}}`.
    ///
    /// - throws: `OFREPError` `PARSE_ERROR` or `INVALID_CONTEXT`, for `key` when a single flag.
    init(_ bytes: [UInt8], key: String?, attributeLimits: UserAttributes.Limits = .standard) throws {
        let node: JSONNode
        do {
            node = try JSONParser.parse(bytes)
        } catch {
            let location = SourceLocator(bytes).location(of: error.offset)
            throw OFREPError(
                .badRequest, code: "PARSE_ERROR", key: key,
                "The body is not JSON at line \(location.line), column \(location.column): \(error.message)")
        }
        guard case .object = node.content, let member = node.member("context") else {
            throw OFREPError(
                .badRequest, code: "INVALID_CONTEXT", key: key,
                #"The body must be {"context": {"targetingKey": "USER ID", …}}."#)
        }
        guard case .object(let context) = member.node.value else {
            throw OFREPError(.badRequest, code: "INVALID_CONTEXT", key: key, "\"context\" must be an object.")
        }
        var user: UserID?
        switch context["targetingKey"] {
        case nil, .null: break
        case .string(let text) where text.isEmpty: break
        case .string(let text):
            do {
                user = try UserID(validating: text)
            } catch {
                throw OFREPError(.badRequest, code: "INVALID_CONTEXT", key: key, "context.targetingKey: \(error)")
            }
        default:
            throw OFREPError(
                .badRequest, code: "INVALID_CONTEXT", key: key, "context.targetingKey must be a string: the user's id.")
        }
        // Every other scalar member is an attribute rules may read; an empty context sends none.
        // Lists and objects, which OpenFeature contexts may hold, are no attributes: left out.
        let scalars = JSONObject(
            context.members.filter {
                switch $0.value {
                case .array, .object: false
                default: true
                }
            })
        let attributes: UserAttributes
        do {
            attributes = try UserAttributes(context: scalars, limits: attributeLimits)
        } catch {
            if case .tooLarge = error {
                throw OFREPError(.contentTooLarge, code: "INVALID_CONTEXT", key: key, "context: \(error).")
            }
            throw OFREPError(.badRequest, code: "INVALID_CONTEXT", key: key, "context: \(error).")
        }
        self.context = FlagContext(
            user: user, isDevelopment: context["development"] == .bool(true),
            attributes: attributes.values.isEmpty ? nil : attributes)
        contextBytes = JSONWriter(style: .compact).bytes(of: .object(context))
    }
}

/// An OFREP error answer: `{"key"?, "errorCode", "errorDetails"}` with its status.
struct OFREPError: Error {
    let status: HTTPResponse.Status
    let code: String
    let key: String?
    let details: String
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, code: String, key: String?, _ details: String) {
        self.status = status
        self.code = code
        self.key = key
        self.details = details
    }

    var body: [UInt8] {
        var object = JSONObject()
        if let key { object.append("key", .string(key)) }
        object.append("errorCode", .string(code))
        object.append("errorDetails", .string(details))
        return JSONWriter(style: .compact).bytes(of: .object(object))
    }

    init(_ status: HTTPResponse.Status, _ problem: FlagProblem) {
        self.init(status, code: problem.code, key: problem.key, problem.details)
    }
}

/// The JSON of OFREP answers (see `FlagEvaluation.writeJSON(into:)`).
enum OFREPJSON {
    static func evaluation(_ flag: FlagEvaluation) -> [UInt8] {
        var output: [UInt8] = []
        flag.writeJSON(into: &output)
        return output
    }

    /// `{"flags": [...], "metadata": {"revision": N}, "eventStreams": [...]}`.
    static func bulk(_ evaluations: FlagEvaluations, changesURI: String) -> [UInt8] {
        var output: [UInt8] = Array(#"{"flags":["#.utf8)
        for (index, result) in evaluations.flags.enumerated() {
            if index > 0 { output.append(UInt8(ascii: ",")) }
            switch result {
            case .success(let flag): flag.writeJSON(into: &output)
            case .failure(let problem):
                output.append(contentsOf: JSONWriter(style: .compact).bytes(of: problem.jsonValue))
            }
        }
        output.append(contentsOf: #"],"metadata":{"revision":"#.utf8)
        output.append(contentsOf: String(evaluations.revision).utf8)
        output.append(contentsOf: #"},"eventStreams":[{"type":"sse","endpoint":{"requestUri":"#.utf8)
        JSONWriter.writeString(changesURI, into: &output)
        output.append(contentsOf: #"},"inactivityDelaySec":120}]}"#.utf8)
        return output
    }
}

/// The environment (and flag) of an OFREP path, `/t/{tenant}/{env}/ofrep/v1/evaluate/flags[/{key}]`,
/// for the event loop's fast path.
struct OFREPTarget {
    let path: EnvironmentPath
    /// The percent-decoded key of a single evaluation; `nil` for bulk.
    let key: String?

    init?(_ path: String) {
        guard !path.contains("?") else { return nil }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 8 || parts.count == 9, parts[0].isEmpty, parts[1] == "t", parts[4] == "ofrep",
            parts[5] == "v1", parts[6] == "evaluate", parts[7] == "flags",
            let tenant = try? TenantSlug(validating: String(parts[2])),
            let environment = try? EnvironmentName(validating: String(parts[3]))
        else { return nil }
        self.path = EnvironmentPath(tenant: tenant, environment: environment)
        if parts.count == 9 {
            guard let key = parts[8].removingPercentEncoding, !key.isEmpty else { return nil }
            self.key = key
        } else {
            key = nil
        }
    }
}
