import FlagpoleHandbook
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// The docs a running server serves at `/docs/NAME.md`, which the dashboard's pages link to.
@Suite("The docs served")
struct HandbookTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test("Every Markdown file of docs/ is compiled in, as written")
    func everyDocumentIsListed() throws {
        let folder = Self.repository.appendingPathComponent("docs")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".md") }
        #expect(Set(Handbook.pages.keys) == Set(files))
        for file in files {
            #expect(Handbook.pages[file] == Array(try Data(contentsOf: folder.appendingPathComponent(file))), "\(file)")
        }
    }

    @Test("Every /docs link of the dashboard's templates names a document")
    func templateLinksResolve() throws {
        let templates = Self.repository.appendingPathComponent("Sources/FlagpoleServer/Dashboard/Templates")
        var linked: Set<String> = []
        for file in try FileManager.default.contentsOfDirectory(atPath: templates.path) {
            let text = try String(contentsOf: templates.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: #/href="/docs/([^"]+)"/#) { linked.insert(String(match.output.1)) }
        }
        #expect(!linked.isEmpty)
        #expect(linked.subtracting(Handbook.pages.keys).isEmpty)
    }

    @Test("A document is served as plain text without signing in; an unknown one is a 404 listing them")
    func served() async throws {
        let server = try await TestServer()
        try await server.test { client in
            let ramps = try await client.send(.get, "/docs/RAMPS.md")
            #expect(ramps.status == .ok)
            #expect(ramps.headers[.contentType] == "text/plain; charset=utf-8")
            #expect(Array(buffer: ramps.body) == Handbook.pages["RAMPS.md"])
            let unknown = try await client.send(.get, "/docs/SECRETS.md")
            #expect(unknown.status == .notFound && String(buffer: unknown.body).contains("RAMPS.md"))
        }
    }
}
