import FlagpoleCore
import FlagpoleStore
import HTTPTypes

/// How each kind of client connects to one environment: its URL and a Swift snippet to copy, for
/// the environment's page.
struct ClientConnections: Sendable {
    struct Client: Sendable {
        var id: String
        var name: String
        var summary: String
        var url: String
        var snippet: String
        /// What went wrong lately with this kind of client, said where its snippet is.
        var warning: String? = nil
    }

    var clients: [Client]
    var isPrivate: Bool

    /// `origin` is the server as the browser reached it: `https://flags.example.com`;
    /// `refusedEvents`, the environment's event batches refused in the last 24 hours.
    init(_ path: EnvironmentPath, origin: String, isPrivate: Bool, refusedEvents: RefusedEventBatches? = nil) {
        let base =
            "\(origin)/t/\(EnvironmentURLs.segment(path.tenant.rawValue))/"
            + EnvironmentURLs.segment(path.environment.rawValue)
        let key = isPrivate ? "a delivery key of \(path)" : "any key (a delivery key of \(path) to send events)"
        self.isPrivate = isPrivate
        clients = [
            Client(
                id: "featureflags", name: "FeatureFlags",
                summary:
                    "features.json, pinned to the user so a fresh install lands in their recorded group\(isPrivate ? " (private: a key in Authorization: Bearer, or a CDN in front)" : "").",
                url: "\(base)/features.json?user=USER_ID",
                snippet: """
                    FeatureFlags.configurationURL = URL(string: "\(base)/features.json?user=\\(userID)")!
                    FeatureFlags.refresh()
                    """),
            Client(
                id: "swiftfeatureconfigs", name: "SwiftFeatureConfigs",
                summary:
                    "The configs dictionary loadInMemoryFeatures takes, for the user and only what the app's release declares (flagpole config import featureConfigs.json --release 5.2), so persist() never meets a key its class lacks\(isPrivate ? " (private: a key in Authorization: Bearer)" : "").",
                url: "\(base)/configs.json?user=USER_ID&release=RELEASE",
                snippet: """
                    let release = Bundle.main.infoDictionary?["CFBundleShortVersionString"] as? String ?? ""
                    let url = URL(string: "\(base)/configs.json?user=\\(userID)&release=\\(release)")!
                    let (data, _) = try await URLSession.shared.data(from: url)
                    // appConfigs: the app's FeatureConfigs subclass.
                    appConfigs.loadInMemoryFeatures(try JSONSerialization.jsonObject(with: data) as! [String: Any])
                    """),
            Client(
                id: "openfeature", name: "OpenFeature (OFREP)",
                summary:
                    "The base URL of any OFREP provider\(isPrivate ? ", with a key of the tenant" : ""); by hand, every flag for a user:",
                url: base,
                snippet: """
                    var request = URLRequest(url: URL(string: "\(base)/ofrep/v1/evaluate/flags")!)
                    request.httpMethod = "POST"
                    request.setValue("application/json", forHTTPHeaderField: "Content-Type")\(isPrivate ? "\nrequest.setValue(\"Bearer DELIVERY_KEY\", forHTTPHeaderField: \"Authorization\")" : "")
                    request.httpBody = try JSONSerialization.data(withJSONObject: ["context": ["targetingKey": userID]])
                    let (flags, _) = try await URLSession.shared.data(for: request)
                    """),
            Client(
                id: "bucketeer", name: "Bucketeer SDK",
                summary: "The apiEndpoint; the API key is \(key).",
                url: base,
                snippet: """
                    let config = try BKTConfig.Builder()
                        .with(apiKey: "DELIVERY_KEY")
                        .with(apiEndpoint: "\(base)")
                        .with(featureTag: "")
                        .with(appVersion: "1.0.0")
                        .build()
                    """,
                warning: refusedEvents?.summary(span: "the last 24 h").map {
                    "\($0). Those apps' track() calls are lost while their flags keep working: give them a delivery key of \(path) (flagpole key create --tenant \(path.tenant) --role delivery --env \(path.environment))."
                }),
        ]
    }

    /// The origin a browser reached the server at: the authority (`Host`) it sent, over HTTPS
    /// when a proxy in front says so (`X-Forwarded-Proto`).
    static func origin(of request: HTTPRequest) -> String {
        let scheme = request.headerFields[.xForwardedProto]?.lowercased() == "https" ? "https" : "http"
        return "\(scheme)://\(request.authority ?? "HOST")"
    }
}

extension HTTPField.Name {
    static let xForwardedProto = HTTPField.Name("X-Forwarded-Proto")!
}
