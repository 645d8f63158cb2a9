import Crypto
import FlagpoleCore
import FlagpoleStore
import Foundation
import HTTPTypes
import NIOCore

/// What a Bucketeer SDK's `get_evaluations` asks: `{"tag", "user": {"id", "data"},
/// "userEvaluationsId", …}` (docs/BUCKETEER.md). `sourceId`, `sdkVersion` and
/// `userEvaluationCondition` are read by no rule here: the answer depends on who asks, not on
/// what the app last stored, so SDKs from 2.0 on are answered alike.
public struct BucketeerEvaluationsRequest: Sendable {
    public let user: UserID
    /// `user.data`, as rules read it: what fits the limits when the app sent more (then kept nowhere).
    public let attributes: UserAttributes
    /// `""` asks for every flag.
    public let tag: String
    /// The token of the answer the app holds; `""` on a fresh install.
    public let presentedToken: String

    /// A poll as an app with no answer yet sends it (`flagpole evaluate --client bucketeer`).
    public init(user: UserID, attributes: UserAttributes = .empty, tag: String = "") {
        self.user = user
        self.attributes = attributes
        self.tag = tag
        presentedToken = ""
    }

    /// - throws: `BucketeerError` `400` naming what is wrong and where.
    init(_ bytes: [UInt8], attributeLimits: UserAttributes.Limits) throws {
        let root = try BucketeerError.parse(bytes)
        guard case .object = root.content else {
            throw BucketeerError(
                .badRequest, #"The body must be {"user": {"id": "USER ID", "data": {…}}, "tag": "…"}."#)
        }
        guard let user = root.member("user")?.node, case .object = user.content else {
            throw BucketeerError(.badRequest, "\"user\" is required: an object with the user's \"id\".")
        }
        guard case .string(let id)? = user.member("id")?.node.content, !id.isEmpty else {
            throw BucketeerError(.badRequest, "\"user.id\" must be a non-empty string: the user's id.")
        }
        do {
            self.user = try UserID(validating: id)
        } catch {
            throw BucketeerError(.badRequest, "\"user.id\": \(error)")
        }
        var values: [String: AttributeValue] = [:]
        switch user.member("data")?.node.content {
        case nil, .null?: break
        case .object(let members)?:
            for member in members {
                switch member.node.content {
                case .string(let text): values[member.key] = .string(text)
                default:
                    throw BucketeerError(
                        .badRequest, "\"user.data.\(member.key)\" must be a string: the SDK's attributes are strings.")
                }
            }
        default: throw BucketeerError(.badRequest, "\"user.data\" must be an object of strings.")
        }
        attributes = UserAttributes.fitting(values, limits: attributeLimits)
        tag = try Self.string("tag", of: root)
        presentedToken = try Self.string("userEvaluationsId", of: root)
    }

    /// An optional string member; `""` when absent.
    private static func string(_ key: String, of root: JSONNode) throws -> String {
        switch root.member(key)?.node.content {
        case nil, .null?: return ""
        case .string(let text)?: return text
        default: throw BucketeerError(.badRequest, "\"\(key)\" must be a string.")
        }
    }

    /// The SDK always sends `user.data`: `{}` is a user without attributes, not one whose last
    /// attributes on record are to be read.
    public var context: FlagContext { FlagContext(user: user, attributes: attributes) }
}

/// The answer to `get_evaluations`, every key present with the exact JSON type the SDK decodes
/// (a missing `[]` or a number where it expects a string drops the whole answer).
public enum BucketeerEvaluationsAnswer {
    /// The answer for `request`: every flag the tag selects with `forceUpdate: true`, or, when
    /// the app already holds exactly this answer (its token is this one), the token alone.
    ///
    /// The token is a hash of who asks (user, attributes, tag) and of the evaluations (which
    /// carry the revision), so it changes whenever this user's answer would, and is the same
    /// across restarts and instances. Bucketeer's own diff against the presented token is not
    /// copied: the SDK keeps one token per install, not per user. An answer not recorded (a new
    /// user over the limit) gets a token no later poll presents back as current.
    public static func answer(
        _ evaluations: FlagEvaluations, for request: BucketeerEvaluationsRequest, isRecorded: Bool,
        now: Date = Date()
    ) -> [UInt8] {
        let list = evaluationsJSON(evaluations, user: request.user)
        let token = isRecorded ? Self.token(list, for: request) : "unrecorded-" + UUID().uuidString.lowercased()
        let isCurrent = token == request.presentedToken
        var output: [UInt8] = Array(#"{"userEvaluationsId":"#.utf8)
        JSONWriter.writeString(token, into: &output)
        output.append(contentsOf: #","evaluations":{"id":"#.utf8)
        JSONWriter.writeString(token, into: &output)
        output.append(contentsOf: #","createdAt":""#.utf8)
        output.append(contentsOf: String(Int64(now.timeIntervalSince1970)).utf8)
        output.append(contentsOf: #"","forceUpdate":"#.utf8)
        output.append(contentsOf: (isCurrent ? "false" : "true").utf8)
        output.append(contentsOf: #","archivedFeatureIds":[],"evaluations":"#.utf8)
        output.append(contentsOf: isCurrent ? Array("[]".utf8) : list)
        output.append(contentsOf: "}}".utf8)
        return output
    }

    /// 32 hex digits of SHA-256 over the user, their attributes, the tag and the evaluations.
    static func token(_ evaluations: [UInt8], for request: BucketeerEvaluationsRequest) -> String {
        var hasher = SHA256()
        hasher.update(data: Array(request.user.rawValue.utf8))
        hasher.update(data: [0])
        hasher.update(data: request.attributes.canonicalBytes)
        hasher.update(data: [0])
        hasher.update(data: Array(request.tag.utf8))
        hasher.update(data: [0])
        hasher.update(data: evaluations)
        return Hex.encode(hasher.finalize()).prefix(32).description
    }

    /// `[{"id", "featureId", "featureVersion", "userId", "variationId", "variationName",
    /// "variationValue", "reason": {"type", "ruleId"}}, …]`.
    static func evaluationsJSON(_ evaluations: FlagEvaluations, user: UserID) -> [UInt8] {
        var output: [UInt8] = [UInt8(ascii: "[")]
        var isFirst = true
        for case .success(let flag) in evaluations.flags {
            if !isFirst { output.append(UInt8(ascii: ",")) }
            isFirst = false
            let version = String(flag.revision)
            output.append(contentsOf: #"{"id":"#.utf8)
            JSONWriter.writeString("\(flag.key):\(version):\(user.rawValue)", into: &output)
            output.append(contentsOf: #","featureId":"#.utf8)
            JSONWriter.writeString(flag.key, into: &output)
            output.append(contentsOf: #","featureVersion":"#.utf8)
            output.append(contentsOf: version.utf8)
            output.append(contentsOf: #","userId":"#.utf8)
            JSONWriter.writeString(user.rawValue, into: &output)
            output.append(contentsOf: #","variationId":"#.utf8)
            JSONWriter.writeString(flag.variant, into: &output)
            output.append(contentsOf: #","variationName":"#.utf8)
            JSONWriter.writeString(flag.variant, into: &output)
            output.append(contentsOf: #","variationValue":"#.utf8)
            JSONWriter.writeString(flag.value.text, into: &output)
            let reason = BucketeerReason(flag)
            output.append(contentsOf: #","reason":{"type":""#.utf8)
            output.append(contentsOf: reason.type.utf8)
            output.append(contentsOf: #"","ruleId":"#.utf8)
            JSONWriter.writeString(reason.ruleID, into: &output)
            output.append(contentsOf: "}}".utf8)
        }
        output.append(UInt8(ascii: "]"))
        return output
    }
}

/// A flag's reason in the SDK's six names, of which the server gives four: `TARGET` for what
/// the store holds for this user alone (a QA override, a recorded unlock), `RULE` with its id for
/// every rule, segment rules included, `OFF_VARIATION` for a disabled feature (a development flag
/// as a release app sees it), `DEFAULT` for everything else (biases, flags, defaults).
/// `PREREQUISITE` has no counterpart; `CLIENT` is the SDK's own.
public struct BucketeerReason: Equatable, Sendable {
    public let type: String
    public let ruleID: String

    public init(_ flag: FlagEvaluation) {
        switch flag.reason {
        case .disabled: (type, ruleID) = ("OFF_VARIATION", "")
        case .static, .split: (type, ruleID) = ("DEFAULT", "")
        case .targetingMatch:
            if let rule = flag.rule { (type, ruleID) = ("RULE", rule) } else { (type, ruleID) = ("TARGET", "") }
        }
    }
}

/// A refused Bucketeer call: its status, and `{"error": {"code": N, "message": "…"}}`, which the
/// SDK puts in the app's log.
struct BucketeerError: Error {
    let status: HTTPResponse.Status
    let message: String
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ message: String) {
        self.status = status
        self.message = message
    }

    var body: [UInt8] {
        JSONWriter(style: .compact).bytes(
            of: ["error": ["code": .number(Double(status.code)), "message": .string(message)]])
    }

    /// `bytes` as JSON, or a `400` naming the line and column.
    static func parse(_ bytes: [UInt8]) throws -> JSONNode {
        do {
            return try JSONParser.parse(bytes)
        } catch {
            let location = SourceLocator(bytes).location(of: error.offset)
            throw BucketeerError(
                .badRequest,
                "The body is not JSON at line \(location.line), column \(location.column): \(error.message)")
        }
    }
}
