import FlagpoleCore
import Foundation
import GRDB
import Testing

@testable import FlagpoleStore

@Suite("The publish log")
struct PublishLogTests {
    func entry(
        _ target: String, revision: Int, _ outcome: PublishOutcome, error: String? = nil, at seconds: Double
    ) -> PublishLogEntry {
        PublishLogEntry(
            target: target, environment: .acmeProduction, revision: revision, outcome: outcome,
            objectsWritten: outcome == .published ? 6 : 0, error: error,
            startedAt: Date(timeIntervalSince1970: seconds),
            finishedAt: Date(timeIntervalSince1970: seconds + 1))
    }

    @Test("Each target's latest entry says up to date, behind or failing, beside the last success")
    func states() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(#"{"features": [{"name": "a", "enabled": true}]}"#)
        try await store.outbound.recordPublishes([
            entry("s3://one", revision: 1, .published, at: 100), entry("s3://two", revision: 1, .published, at: 100),
        ])
        #expect(try await store.outbound.publishStatus().map(\.state) == [.upToDate, .upToDate])

        try await store.importText(#"{"features": [{"name": "a", "enabled": false}]}"#)
        try await store.outbound.recordPublishes([
            entry("s3://two", revision: 2, .failed, error: "503 SlowDown", at: 200)
        ])
        let statuses = try await store.outbound.publishStatus()
        #expect(statuses.map(\.last.target) == ["s3://one", "s3://two"])
        #expect(statuses[0].state == .behind(revisions: 1))
        #expect(statuses[1].state == .failing("503 SlowDown"))
        #expect(statuses[1].publishedRevision == 1 && statuses[1].currentRevision == 2)
        #expect(statuses[1].publishedAt == Date(timeIntervalSince1970: 101))
        #expect(try await store.outbound.publishStatus(target: "s3://one").count == 1)

        try await store.outbound.recordPublishes([entry("s3://two", revision: 2, .unchanged, at: 300)])
        #expect(try await store.outbound.publishStatus(target: "s3://two").first?.state == .upToDate)
    }

    @Test("A failed entry needs its error, and only it has one; the log keeps the latest 100 per target")
    func constraintsAndTrimming() async throws {
        let store = try await FeatureStore.makeWithTenants()
        try await store.importText(#"{"features": []}"#)
        await #expect(throws: (any Error).self) {
            try await store.outbound.recordPublishes([entry("s3://one", revision: 1, .failed, at: 1)])
        }
        await #expect(throws: (any Error).self) {
            try await store.outbound.recordPublishes([entry("s3://one", revision: 1, .published, error: "x", at: 1)])
        }
        #expect(try await store.outbound.publishStatus().isEmpty, "a refused entry leaves nothing")
        try await store.outbound.recordPublishes(
            (1...130).map { entry("s3://one", revision: 1, .unchanged, at: Double($0)) })
        let (count, oldest) = try await store.read { db in
            (
                try db.value(Int.self, "SELECT count(*) FROM publish_log")!,
                try db.value(Int64.self, "SELECT min(started_at) FROM publish_log")!
            )
        }
        #expect(count == PublishTable.kept)
        #expect(oldest == 31_000, "the oldest entries go first")
    }
}
