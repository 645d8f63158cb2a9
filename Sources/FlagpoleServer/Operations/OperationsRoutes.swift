import FlagpoleStore
import HTTPTypes
import Hummingbird
import NIOCore
import Prometheus

/// `GET /healthz` and `GET /metrics`, for load balancers and Prometheus; no key needed.
struct OperationsRoutes {
    let store: FeatureStore
    let registry: PrometheusCollectorRegistry

    func register(on router: Router<FlagpoleRequestContext>) {
        router.get("healthz") { _, context -> Response in
            do {
                try await store.checkHealth()
            } catch {
                // Anyone may ask: the details go to the log, not to the caller.
                context.logger.error("Health check failed", metadata: ["error": "\(error)"])
                throw APIError(
                    .serviceUnavailable, code: "unavailable", "The database cannot be read. The server's log says why.")
            }
            return .json(["status": .string("ok")])
        }
        router.get("metrics") { _, _ -> Response in
            var bytes: [UInt8] = []
            registry.emit(into: &bytes)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }
}
