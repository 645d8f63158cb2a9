import FlagpoleCore
import FlagpoleTestSupport
import Foundation
import Synchronization
import Testing

@testable import FlagpoleStore

@Suite("Leases across instances")
struct LeaseTests {
    @Test("Two stores on one PostgreSQL database hold a lease one at a time; other leases don't wait")
    func oneHolderAtATime() async throws {
        let address = try DatabaseAddress(parsing: TestPostgres.newDatabase("lease"))
        let first = try await FeatureStore.open(address)
        let second = try await FeatureStore.open(address)
        let holders = Holders()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, store) in [first, second, first, second].enumerated() {
                group.addTask {
                    try await store.withLease("publish s3://bucket") {
                        holders.enter()
                        // Long enough for the others to try meanwhile.
                        try await Task.sleep(for: .milliseconds(200))
                        // Another lease is free while this one is held.
                        if index == 0 { try await second.withLease("expire events") {} }
                        holders.leave()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(holders.most == 1)
        await first.close()
        await second.close()
    }
}

/// How many hold the lease now, and the most that ever did at once.
private final class Holders: Sendable {
    private let state = Mutex((now: 0, most: 0))

    var most: Int { state.withLock { $0.most } }

    func enter() {
        state.withLock { state in
            state.now += 1
            state.most = max(state.most, state.now)
        }
    }

    func leave() {
        state.withLock { $0.now -= 1 }
    }
}

@Suite("PostgreSQL's reads")
struct PostgresReadTests {
    @Test("A read expected to be one statement that runs more is run again in one snapshot, and answers right")
    func oneStatementReadThatRunsMore() async throws {
        let store = try await FeatureStore.open(DatabaseAddress(parsing: TestPostgres.newDatabase("reads")))
        try await store.access.createTenant(TenantSlug(rawValue: "acme"))
        let runs = Runs()
        let answer = try await store.read(expectingOneStatement: true) { db in
            runs.count()
            let tenants = try db.value(Int.self, "SELECT count(*) FROM tenants")
            let environments = try db.value(Int.self, "SELECT count(*) FROM environments")
            return "\(tenants ?? -1) \(environments ?? -1)"
        }
        #expect(answer == "1 1")
        #expect(runs.total == 2, "stopped at its second statement, then run again in a transaction")
        let single = try await store.read(expectingOneStatement: true) { db in
            runs.count()
            return try db.value(Int.self, "SELECT count(*) FROM tenants")
        }
        #expect(single == 1 && runs.total == 3)
        await store.close()
    }
}

/// How many times a read's work ran.
private final class Runs: Sendable {
    private let runs = Mutex(0)

    var total: Int { runs.withLock { $0 } }

    func count() {
        runs.withLock { $0 += 1 }
    }
}
