import FlagpoleCore
import FlagpoleStore
import HTTPTypes
import Hummingbird
import Logging

/// Turns every error into the API's one error shape, so nothing a client sends yields a bare
/// `500`: the store's and the core's errors are the client's to fix (4xx), and anything else
/// is logged with the request id and answered as a server fault.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let allowedMethods: AllowedMethods

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            var apiError = APIError(error)
            if apiError.status == .notFound, context.endpointPath == "NotFound",
                let methods = allowedMethods.methods(for: request.uri.path)
            {
                apiError = APIError(
                    .methodNotAllowed, code: "method_not_allowed",
                    "\(request.uri.path) does not take \(request.method); it takes \(methods.map(\.rawValue).joined(separator: ", "))."
                )
                apiError.headers[.allow] = methods.map(\.rawValue).joined(separator: ", ")
            }
            if apiError.status.kind == .serverError {
                context.logger.error("Request failed", metadata: ["error": "\(error)", "path": "\(request.uri.path)"])
            }
            // The router's own refusals of a Bucketeer call (an apiEndpoint without the
            // environment, a GET) in the SDK's error shape, or the app's log says only "NotFound".
            if BucketeerRoutes.isCall(request.uri.path) {
                var refusal = BucketeerError(
                    apiError.status,
                    apiError.status == .notFound
                        ? "No Bucketeer call is at \(request.uri.path): the SDK's apiEndpoint is https://HOST/t/TENANT/ENV (or https://HOST with a delivery key scoped to one environment)."
                        : apiError.message)
                refusal.headers = apiError.headers
                return BucketeerAnswering.response(to: refusal)
            }
            return try apiError.response(from: request, context: context)
        }
    }
}

extension APIError {
    /// The API's answer to `error`: the one place where errors become HTTP statuses.
    init(_ error: any Error) {
        switch error {
        case let error as APIError: self = error
        case let error as TenancyError:
            switch error {
            case .tenantNotFound, .environmentNotFound: self.init(.notFound, code: error.code, error.description)
            case .tenantAlreadyExists, .environmentAlreadyExists:
                self.init(.conflict, code: error.code, error.description)
            case .invalidColour:
                self.init(.unprocessableContent, code: error.code, error.description)
            }
        case let error as DocumentError: self.init(error)
        case let error as ConfigError:
            switch error {
            case .configNotFound, .unknownRelease: self.init(.notFound, code: error.code, error.description)
            case .refused(_, let issues): self.init(ConfigsRefused(issues), description: error.description)
            }
        case TargetingError.refused(let path, let issues):
            self.init(
                .unprocessableContent, code: "invalid_targeting",
                TargetingError.refused(path, issues: issues).description,
                details: ["issues": .array(issues.map(\.jsonValue))])
        case let error as TargetingError:
            if case .segmentNotFound = error {
                self.init(.notFound, code: "not_found", error.description)
            } else {
                self.init(.conflict, code: error.code, error.description)
            }
        case let error as ConfigsRefused:
            self.init(
                error,
                description:
                    "The configs were refused: \(error.issues.filter { $0.severity == .error }.map(\.description).joined(separator: " | ")). Nothing was written."
            )
        case let error as UserStateError:
            if case .noOverride = error {
                self.init(.notFound, code: error.code, error.description)
            } else {
                self.init(.unprocessableContent, code: error.code, error.description)
            }
        case let error as KeyError:
            if case .keyNotFound = error {
                self.init(.notFound, code: error.code, error.description)
            } else {
                self.init(.unprocessableContent, code: error.code, error.description)
            }
        case let error as DeliveryError: self.init(.unprocessableContent, code: error.code, error.description)
        case let error as MemberError:
            let status: HTTPResponse.Status =
                switch error {
                case .memberNotFound, .unknownMember, .sessionNotFound, .linkNotFound: .notFound
                case .alreadyMember, .alreadyAccepted: .conflict
                case .linkUsed, .linkExpired: .gone
                case .passwordTooLong: .contentTooLarge
                case .wrongPassword: .forbidden
                default: .unprocessableContent
                }
            self.init(status, code: error.code, error.description)
        case let error as ResultsError:
            switch error {
            case .goalNotFound, .epochNotFound: self.init(.notFound, code: error.code, error.description)
            case .goalExists: self.init(.conflict, code: error.code, error.description)
            case .batchTooLarge: self.init(.contentTooLarge, code: error.code, error.description)
            case .invalidGoal, .notATest, .controlNotAVariation:
                self.init(.unprocessableContent, code: error.code, error.description)
            }
        case let error as RampError:
            let status: HTTPResponse.Status =
                switch error {
                case .rampNotFound: .notFound
                case .alreadyRamping, .wrongState: .conflict
                default: .unprocessableContent
                }
            self.init(status, code: error.code, error.description)
        case let error as TriggerError:
            let status: HTTPResponse.Status =
                switch error {
                case .triggerNotFound, .unknownToken: .notFound
                case .revoked: .gone
                default: .unprocessableContent
                }
            self.init(status, code: error.code, error.description)
        case let error as WebhookError:
            let status: HTTPResponse.Status =
                switch error {
                case .webhookNotFound: .notFound
                case .privateAddress: .forbidden
                default: .unprocessableContent
                }
            self.init(status, code: error.code, error.description)
        case StorageError.busy:
            self.init(.serviceUnavailable, code: "busy", StorageError.busy.description)
        case let error as StorageError where error.isUnavailable:
            self.init(
                .serviceUnavailable, code: error.code,
                "The server can't reach its database. Nothing was written; try again shortly.")
            // The pool reconnects by itself; a few seconds is how long a restart or failover takes.
            headers[.retryAfter] = "5"
        // The database file, backups and restores are the server's problem, never the client's:
        // their details go to the log, not to the client.
        case is StorageError, is BackupError:
            self.init(
                .internalServerError, code: "storage",
                "The server's database failed. Nothing was written; the log has the details under this request id.")
        case let error as CoreError: self.init(.unprocessableContent, code: error.code, error.description)
        case let error as any HTTPResponseError:
            // Hummingbird's own: unmatched routes, and bodies over the limit (NIOTooManyBytesError).
            switch error.status {
            case .notFound:
                self.init(
                    .notFound, code: "not_found",
                    "There is nothing at this path. The API's routes are listed in openapi.json.")
            case .contentTooLarge:
                self.init(
                    .contentTooLarge, code: "too_large",
                    "The body is over the server's limit. Send less at once, or raise --max-body-size.")
            default:
                self.init(
                    error.status, code: "http_\(error.status.code)",
                    (error as? HTTPError)?.body ?? error.status.reasonPhrase)
            }
        default:
            self.init(
                .internalServerError, code: "internal",
                "The server failed. Nothing was written; the log has the details under this request id.")
        }
    }

    /// A `422` with every issue, each with its pointer, line and column.
    private init(_ refused: ConfigsRefused, description: String) {
        self.init(
            .unprocessableContent, code: "invalid_config", description,
            details: ["issues": .array(refused.issues.map(\.jsonValue))])
    }

    private init(_ error: DocumentError) {
        let message = error.description
        switch error {
        case .featureNotFound, .revisionNotFound, .noRevision:
            self.init(.notFound, code: error.code, message)
        case .revisionConflict(_, let expected, let current):
            self.init(
                .conflict, code: error.code, message,
                details: [
                    "expected": .number(Double(expected)), "current": current.map { .number(Double($0)) } ?? .null,
                ])
        case .importRefused(_, let diagnostics, _), .biasesIgnored(_, let diagnostics):
            self.init(
                .unprocessableContent, code: error.code, message,
                details: [
                    "valid": .bool(!diagnostics.hasErrors), "diagnostics": .array(diagnostics.map(\.jsonValue)),
                ])
        case .reasonRequired, .descriptionTooLong:
            self.init(.unprocessableContent, code: error.code, message)
        }
    }
}
