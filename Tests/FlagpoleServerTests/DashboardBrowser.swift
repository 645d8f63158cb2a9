import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore

/// A browser on the dashboard, as far as the server can tell: it keeps the cookies the server
/// sets, sends them back, and posts forms URL-encoded (or multipart) as a browser would.
struct DashboardBrowser {
    let client: any TestClientProtocol
    private(set) var cookies: [String: String] = [:]
    /// Extra headers on every request (e.g. `X-Forwarded-Proto`).
    var extraHeaders: [HTTPField.Name: String] = [:]

    init(_ client: any TestClientProtocol) {
        self.client = client
    }

    /// Signs in with `key` through the sign-in form; returns the answer to the form.
    @discardableResult
    mutating func signIn(with key: String, next: String = "/") async throws -> TestResponse {
        let form = try await get("/login?next=" + segment(next))
        return try await post("/login", ["csrf": Self.csrf(in: form), "key": key, "next": next])
    }

    /// Gets `uri` as a browser does: its fragment stays in the browser.
    mutating func get(_ uri: String) async throws -> TestResponse {
        try await send(.get, String(uri.prefix { $0 != "#" }), body: nil, contentType: nil)
    }

    /// Posts `fields` URL-encoded; a `biases[]`-style repeated field is given as several pairs.
    mutating func post(_ uri: String, _ fields: KeyValuePairs<String, String>) async throws -> TestResponse {
        try await post(uri, pairs: fields.map { ($0.key, $0.value) })
    }

    mutating func post(_ uri: String, pairs fields: [(key: String, value: String)]) async throws -> TestResponse {
        let body = fields.map { "\(Self.encode($0.key))=\(Self.encode($0.value))" }.joined(separator: "&")
        return try await send(
            .post, uri, body: ByteBuffer(string: body), contentType: "application/x-www-form-urlencoded")
    }

    /// Posts `fields` and one file as `multipart/form-data`, as the import page's upload does.
    mutating func postMultipart(
        _ uri: String, _ fields: [String: String], file: (name: String, bytes: [UInt8])
    ) async throws -> TestResponse {
        let boundary = "----flagpole-test-boundary"
        var body = ByteBuffer()
        for (name, value) in fields {
            body.writeString("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n")
        }
        body.writeString(
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(file.name)\"; filename=\"features.json\"\r\nContent-Type: application/json\r\n\r\n"
        )
        body.writeBytes(file.bytes)
        body.writeString("\r\n--\(boundary)--\r\n")
        return try await send(.post, uri, body: body, contentType: "multipart/form-data; boundary=\(boundary)")
    }

    private mutating func send(
        _ method: HTTPRequest.Method, _ uri: String, body: ByteBuffer?, contentType: String?
    ) async throws -> TestResponse {
        var headers = HTTPFields()
        for (name, value) in extraHeaders { headers[name] = value }
        if let contentType { headers[.contentType] = contentType }
        if !cookies.isEmpty { headers[.cookie] = cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ") }
        let response = try await client.execute(uri: uri, method: method, headers: headers, body: body) { $0 }
        for header in response.headers[values: .setCookie] {
            let pair = header.split(separator: ";")[0].split(
                separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(pair[0])
            let value = pair.count > 1 ? String(pair[1]) : ""
            if header.contains("Max-Age=0") || value.isEmpty { cookies[name] = nil } else { cookies[name] = value }
        }
        return response
    }

    /// The CSRF token of the first form of a page.
    static func csrf(in page: TestResponse) -> String {
        let html = page.text
        guard let range = html.range(of: #"name="csrf" value=""#) else { return "" }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }

    private static func encode(_ text: String) -> String {
        text.addingPercentEncoding(
            withAllowedCharacters: CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~")))!
    }
}
