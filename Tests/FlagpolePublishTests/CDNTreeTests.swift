import FlagpoleCore
import FlagpoleStore
import Foundation
import Testing

@testable import FlagpolePublish

@Suite("Publishing the CDN tree")
struct CDNTreeTests {
    let root: URL

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("flagpole-cdn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    func revision(_ tenant: String, _ number: Int, _ text: String) -> PublishedRevision {
        PublishedRevision(
            path: EnvironmentPath(tenant: TenantSlug(rawValue: tenant), environment: .production),
            number: number, createdAt: Date(), features: Array(text.utf8), configs: Array("{}\n".utf8))
    }

    @Test("SHA-256 matches the published test vector")
    func sha256Vector() {
        #expect(
            DeliveryArtifact(bytes: Array("abc".utf8)).sha256
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            DeliveryArtifact(bytes: []).sha256 == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test("gzip is deterministic and carries no timestamp")
    func gzipIsStable() throws {
        let artifact = DeliveryArtifact(bytes: Array(String(repeating: "{\"features\": []}\n", count: 50).utf8))
        let first = try artifact.gzipped()
        #expect(first == (try artifact.gzipped()))
        #expect(Array(first.prefix(2)) == [0x1F, 0x8B])
        #expect(Array(first[4..<8]) == [0, 0, 0, 0], "MTIME must be zero")
        #expect(first.count < artifact.bytes.count)
    }

    @Test(
        "The tree holds each document, its gzip, its configs, a copy per revision and a manifest; publishing again replaces it whole"
    )
    func publishAndReplace() throws {
        let directory = root.appendingPathComponent("cdn")
        let tree = CDNTree(directory: directory)
        try tree.publish([revision("acme", 1, "{\"features\": []}\n"), revision("globex", 4, "[]")])
        #expect(
            try String(contentsOf: directory.appendingPathComponent("acme/production/features.json"), encoding: .utf8)
                == "{\"features\": []}\n")
        #expect(
            FileManager.default.fileExists(
                atPath: directory.appendingPathComponent("globex/production/features.json.gz").path))

        // A tenant gone from the second publication is gone from the tree: it is replaced, not merged.
        let entries = try tree.publish([revision("acme", 2, "{\"features\": [{\"name\": \"a\"}]}\n")])
        #expect(
            entries.map(\.path) == [
                "acme/production/configs.json", "acme/production/features.json", "acme/production/features.json.gz",
                "acme/production/revisions/2/configs.json", "acme/production/revisions/2/features.json",
                "acme/production/revisions/2/features.json.gz",
            ])
        #expect(entries.allSatisfy { $0.revision == 2 })
        #expect(
            entries.filter { $0.path.contains("/revisions/") }.allSatisfy { $0.cacheControl == CacheControl.immutable })
        #expect(
            entries.filter { !$0.path.contains("/revisions/") }.allSatisfy { $0.cacheControl == CacheControl.standard })
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("globex").path))
        let manifest = try String(contentsOf: directory.appendingPathComponent("manifest.json"), encoding: .utf8)
        #expect(
            manifest.contains(
                "\"sha256\": \"\(DeliveryArtifact(bytes: Array("{\"features\": [{\"name\": \"a\"}]}\n".utf8)).sha256)\""
            ))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: root.path) == ["cdn"],
            "no staging folder is left behind")
    }

    @Test("A file where the tree should be is refused")
    func fileInTheWay() throws {
        let path = root.appendingPathComponent("cdn")
        try Data("x".utf8).write(to: path)
        #expect(throws: PublishError.self) { try CDNTree(directory: path).publish([]) }
    }
}
