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
        router.get("healthz", use: health)
        router.get("metrics", use: metrics)
    }

    /// `GET /healthz`: `200` while the database answers, `503` with `Retry-After` while it can't.
    @Sendable func health(_ request: Request, context: FlagpoleRequestContext) async throws -> Response {
        do {
            try await store.checkHealth()
        } catch {
            // Anyone may ask: the details go to the log, not to the caller.
            context.logger.error("Health check failed", metadata: ["error": "\(error)"])
            if let error = error as? StorageError, error.isUnavailable {
                var answer = APIError(
                    .serviceUnavailable, code: error.code,
                    "The database can't be reached: delivery serves the documents it has cached, writes are refused, and the server reconnects by itself."
                )
                answer.headers[.retryAfter] = "5"
                throw answer
            }
            throw APIError(
                .serviceUnavailable, code: "unavailable", "The database cannot be read. The server's log says why.")
        }
        return .json(["status": .string("ok")])
    }

    /// `GET /metrics`: the registry in Prometheus' text format, the publish log's gauges read first.
    @Sendable func metrics(_ request: Request, context: FlagpoleRequestContext) async throws -> Response {
        do {
            try await exportPublishStatus()
        } catch {
            context.logger.warning("Could not read the publish log for /metrics", metadata: ["error": "\(error)"])
        }
        var bytes: [UInt8] = []
        registry.emit(into: &bytes)
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The publish log as gauges, read at each scrape, the same as the dashboard shows: for each
    /// target and environment, the revision in the bucket, how far behind it is, whether the last
    /// publish failed, and when the last one succeeded.
    private func exportPublishStatus() async throws {
        for status in try await store.outbound.publishStatus() {
            let labels = [
                ("target", status.last.target), ("tenant", status.last.environment.tenant.rawValue),
                ("environment", status.last.environment.environment.rawValue),
            ]
            var behind = 0
            if case .behind(let count) = status.state { behind = count }
            gauge("revision", "", "The revision the last successful publish left in the bucket (0: none).", labels)
                .set(Double(status.publishedRevision ?? 0))
            gauge(
                "behind", "revisions", "How many revisions the bucket is behind the environment's current one.", labels
            )
            .set(Double(behind))
            gauge("failing", "", "1 when the last publish failed, else 0.", labels)
                .set(status.last.outcome == .failed ? 1.0 : 0.0)
            gauge(
                "last_success_timestamp", "seconds", "When the last successful publish finished (Unix time; 0: never).",
                labels
            )
            .set(status.publishedAt?.timeIntervalSince1970 ?? 0)
        }
    }

    private func gauge(_ name: String, _ unit: String, _ help: String, _ labels: [(String, String)]) -> Gauge {
        registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "flagpole", subsystem: "publish", metricName: name, unitName: unit, helpText: help),
            labels: labels)
    }
}
