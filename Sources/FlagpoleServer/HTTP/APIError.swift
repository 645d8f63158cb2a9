import FlagpoleCore
import HTTPTypes
import Hummingbird
import NIOCore

/// Every error the API answers, in one shape: `{"error": {"code", "message", "details"}}`.
///
/// `code` is stable for programs, `message` says what went wrong and how to fix it, and
/// `details` carries what a program needs to act (diagnostics, the current revision, a position).
public struct APIError: HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    public var code: String
    public var message: String
    public var details: JSONValue
    /// Extra response headers (`WWW-Authenticate` on a 401).
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, code: String, _ message: String, details: JSONValue = .null) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var body: JSONObject = ["code": .string(code), "message": .string(message), "details": details]
        body.append("requestId", .string(context.id))
        var response = Response.json(["error": .object(body)], status: status)
        response.headers.append(contentsOf: headers)
        response.headers[.requestID] = context.id
        return response
    }

    // The errors the API itself raises.

    static func malformed(_ message: String, details: JSONValue = .null) -> APIError {
        APIError(.badRequest, code: "malformed", message, details: details)
    }

    /// Attributes refused: `413` for too many bytes, `422` otherwise.
    static func attributes(_ refusal: UserAttributes.Refusal) -> APIError {
        if case .tooLarge = refusal {
            return APIError(
                .contentTooLarge, code: "too_large", "The user's attributes: \(refusal). Send fewer or shorter ones.")
        }
        return invalid("The user's attributes: \(refusal).")
    }

    static func invalid(_ message: String, pointer: String? = nil) -> APIError {
        APIError(
            .unprocessableContent, code: "invalid", message, details: pointer.map { ["pointer": .string($0)] } ?? .null)
    }

    static let unauthenticated: APIError = {
        var error = APIError(
            .unauthorized, code: "unauthenticated",
            "This needs an API key: send `Authorization: Bearer KEY`. Make one with `flagpole key create --tenant SLUG --role reader`."
        )
        error.headers[.wwwAuthenticate] = "Bearer"
        return error
    }()

    static let unknownKey: APIError = {
        var error = APIError(
            .unauthorized, code: "unauthenticated",
            "The API key is unknown or revoked. Check it, or make a new one with `flagpole key create`.")
        error.headers[.wwwAuthenticate] = "Bearer error=\"invalid_token\""
        return error
    }()

    static func forbidden(needs role: String) -> APIError {
        APIError(
            .forbidden, code: "forbidden",
            "This role cannot do this: it needs \(role). Use a key with that role, or ask an admin of the tenant for it.",
            details: ["needs": .string(role)])
    }
}

extension HTTPField.Name {
    static let requestID = HTTPField.Name("X-Request-Id")!
}

extension Response {
    /// A compact JSON body.
    static func json(_ value: JSONValue, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        json(bytes: JSONWriter(style: .compact).bytes(of: value), status: status, headers: headers)
    }

    /// A JSON body already written, such as configs whose doubles keep their decimal point.
    static func json(bytes: [UInt8], status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json; charset=utf-8"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
