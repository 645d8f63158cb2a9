import AsyncHTTPClient
import NIOCore

/// Where `S3Client` and `PurgeHook` send their requests: in production an `HTTPClient`, in
/// tests a fake bucket or hook receiver in the same process, so that what a publish sends, in
/// which order, and what it does with each answer (retries, 404s, 412s, a lost connection) can
/// be checked without a network. The requests and answers are AsyncHTTPClient's own types, so
/// the production path builds and reads exactly what it did before this seam.
protocol HTTPTransport: Sendable {
    func send(_ request: HTTPClientRequest, timeout: TimeAmount) async throws -> HTTPClientResponse
}

extension HTTPClient: HTTPTransport {
    func send(_ request: HTTPClientRequest, timeout: TimeAmount) async throws -> HTTPClientResponse {
        try await execute(request, timeout: timeout)
    }
}
