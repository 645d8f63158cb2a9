import Crypto
import FlagpoleCore
import FlagpoleStore
import Foundation
import Testing

@testable import FlagpolePublish

/// A store with three environments (acme/production and globex/production public, acme/staging
/// private), a bucket in the process (`FakeS3`), and a publisher that sends to it.
struct PublishBench {
    static let acme = EnvironmentPath(tenant: TenantSlug(rawValue: "acme"), environment: .production)
    static let globex = EnvironmentPath(tenant: TenantSlug(rawValue: "globex"), environment: .production)
    static let staging = EnvironmentPath(
        tenant: TenantSlug(rawValue: "acme"), environment: EnvironmentName(rawValue: "staging"))
    static let target = "s3://flags/mobile"
    static let manifestKey = "mobile/manifest.json"
    static let documents = ["features.json", "features.json.gz", "configs.json"]
    /// Where the publisher reads its AWS settings: only here, never the machine's ~/.aws.
    static let environment = [
        "HOME": "/nonexistent", "AWS_ACCESS_KEY_ID": "AKIAFLAGPOLETEST", "AWS_SECRET_ACCESS_KEY": "test-secret",
        "AWS_REGION": "eu-west-1",
    ]
    static let secret = Array("a-shared-secret-of-32-characters".utf8)

    let store: FeatureStore
    let s3 = FakeS3(bucket: "flags", manifestKey: PublishBench.manifestKey)
    var settings: PublishSettings

    init() async throws {
        settings = PublishSettings(target: try S3Target(parsing: Self.target))
        settings.endpoint = FakeS3.endpoint
        // No waits between attempts: what is retried and how often is what these tests check.
        settings.retries = RetryPolicy(attempts: 3, firstDelay: .zero, longest: .zero, timeout: .seconds(5))
        store = try FeatureStore.inMemory()
        try await store.access.createTenant(Self.acme.tenant)
        try await store.access.createTenant(Self.globex.tenant)
        try await store.access.createEnvironment(Self.staging)
        try await store.access.updateDelivery(of: Self.staging) { $0.isPrivate = true }
        for path in [Self.acme, Self.globex, Self.staging] { try await change(path, to: "first") }
    }

    /// Imports a document with one feature, `name`: a new revision whenever the name is new.
    func change(_ path: EnvironmentPath, to name: String) async throws {
        let text = #"{"features": [{"name": "\#(name)", "enabled": true}]}"#
        _ = try await store.catalog.importDocument(Array(text.utf8), into: path, options: ImportOptions(actor: "test"))
    }

    func publish(_ scope: PublishScope = PublishScope(), dryRun: Bool = false) async -> PublishReport {
        let publisher = Publisher(settings: settings, transport: s3)
        return await publisher.publish(from: store, scope: scope, dryRun: dryRun, environment: Self.environment)
    }

    /// A run's requests to the bucket: those received after the `mark`-th.
    func requests(after mark: Int) -> [ReceivedRequest] {
        Array(s3.received.dropFirst(mark)).filter { $0.key != nil }
    }

    static func folder(_ path: EnvironmentPath) -> String { "mobile/\(path.tenant)/\(path.environment)" }

    /// The keys of an environment's current documents.
    static func current(_ path: EnvironmentPath) -> Set<String> { Set(documents.map { "\(folder(path))/\($0)" }) }

    /// The keys of a revision's immutable copies.
    static func copies(_ path: EnvironmentPath, revision: Int) -> Set<String> {
        Set(documents.map { "\(folder(path))/revisions/\(revision)/\($0)" })
    }

    /// The publish log's latest entry per environment, for this bucket.
    func log() async throws -> [EnvironmentPath: PublishStatus] {
        let statuses = try await store.outbound.publishStatus(target: Self.target)
        return Dictionary(statuses.map { ($0.last.environment, $0) }, uniquingKeysWith: { $1 })
    }

    /// The keys of `requests` by method, in order: `"PUT k"`, `"GET k"`.
    static func lines(_ requests: [ReceivedRequest]) -> [String] { requests.map(\.description) }

    /// The fields of a purge hook's JSON body.
    static func fields(of call: ReceivedRequest) throws -> JSONObject {
        guard case .object(let fields) = try JSONParser.parse(call.body ?? []).value else { return [:] }
        return fields
    }
}

/// `Publisher`'s decisions against a bucket in the process: what it sends, in which order, what
/// it leaves out because the bucket's manifest already lists it, what a failed run leaves and
/// the next one sends, ACLs and Cache-Control of public and private environments, the purge hook.
///
/// After every request the fake bucket checks the promise of docs/PUBLISHING.md — its manifest
/// never names an object that is missing or holds other bytes — and each test expects no breach.
@Suite("Publishing to a bucket: order, what is skipped, failures, privacy, purges")
struct PublisherTests {
    typealias Bench = PublishBench

    @Test("A first publish sends every revision copy, then every current document, then the manifest, last")
    func firstPublishOrder() async throws {
        let bench = try await Bench()
        let report = await bench.publish()
        #expect(report.error == nil)
        let requests = bench.s3.requests
        #expect(Bench.lines(requests).first == "GET mobile/manifest.json")
        #expect(requests.count == 14, "\(Bench.lines(requests))")
        let puts = requests.dropFirst()
        #expect(puts.allSatisfy { $0.method == "PUT" })
        let copies = Bench.copies(Bench.acme, revision: 1).union(Bench.copies(Bench.globex, revision: 1))
        let current = Bench.current(Bench.acme).union(Bench.current(Bench.globex))
        #expect(Set(puts.prefix(6).compactMap(\.key)) == copies)
        #expect(Set(puts.dropFirst(6).prefix(6).compactMap(\.key)) == current)
        #expect(puts.last?.key == Bench.manifestKey)
        #expect(puts.prefix(6).allSatisfy { $0.header("If-None-Match") == "*" }, "a copy is never replaced")
        #expect(puts.dropFirst(6).allSatisfy { $0.header("If-None-Match") == nil })

        let manifest = try #require(try bench.s3.manifest())
        #expect(Set(manifest.entries.keys.map { "mobile/\($0)" }) == copies.union(current))
        #expect(bench.s3.violations.isEmpty, "\(bench.s3.violations)")
        #expect(report.outcome == .published)
        #expect(report.written.count == 13 && report.written.last == Bench.manifestKey)
        #expect(Set(report.written) == copies.union(current).union([Bench.manifestKey]))
        #expect(report.requests == ["GET": 1, "PUT": 13])
        #expect(report.skippedPrivate == [Bench.staging])
        #expect(!bench.s3.keys.contains { $0.contains("/staging/") }, "a private environment not named is not sent")
        #expect(report.items.allSatisfy { $0.reason == "the bucket has no manifest yet" })

        let log = try await bench.log()
        #expect(Set(log.keys) == [Bench.acme, Bench.globex])
        #expect(log.values.allSatisfy { $0.last.outcome == .published && $0.last.objectsWritten == 6 })
        #expect(log.values.allSatisfy { $0.state == .upToDate && $0.last.purge == nil })
    }

    @Test("Each object carries its type, Cache-Control, SHA-256 (hex metadata, base64 checksum) and gzip encoding")
    func objectHeaders() async throws {
        let bench = try await Bench()
        _ = await bench.publish(PublishScope(tenant: Bench.acme.tenant, environment: .production))
        let revision = try #require(try await bench.store.catalog.publishedRevisions(of: [Bench.acme]).first)
        for put in bench.s3.requests where put.method == "PUT" {
            let key = try #require(put.key)
            let body = try #require(put.body)
            let digest = SHA256.hash(data: body)
            if key == Bench.manifestKey {
                #expect(put.header("Cache-Control") == "no-cache", "the manifest must always be revalidated")
                #expect(put.header("Content-Type") == PublishedObject.contentType)
                continue
            }
            #expect(put.header("Content-Type") == PublishedObject.contentType, "\(key)")
            #expect(
                put.header("Cache-Control")
                    == (key.contains("/revisions/") ? CacheControl.immutable : CacheControl.standard), "\(key)")
            #expect(put.header("x-amz-meta-sha256") == Hex.encode(digest), "\(key)")
            #expect(put.header("x-amz-checksum-sha256") == Data(digest).base64EncodedString(), "\(key)")
            #expect(put.header("Content-Encoding") == (key.hasSuffix(".gz") ? "gzip" : nil), "\(key)")
            #expect(put.header("x-amz-acl") == nil, "no ACL without publicRead: the bucket's policy decides")
            if key.hasSuffix("/features.json") { #expect(body == revision.features, "\(key)") }
            if key.hasSuffix("/features.json.gz") {
                #expect(body == (try DeliveryArtifact(bytes: revision.features).gzipped()), "\(key)")
            }
            if key.hasSuffix("/configs.json") { #expect(body == revision.configs, "\(key)") }
        }
        #expect(bench.s3.requests.count == 8)
    }

    @Test("Current documents take the environment's Cache-Control, else the publisher's default; copies are immutable")
    func cacheControlOfCurrentDocuments() async throws {
        var bench = try await Bench()
        bench.settings.defaultCacheControl = "public, max-age=5"
        try await bench.store.access.updateDelivery(of: Bench.globex) { $0.cacheControl = "public, max-age=60" }
        _ = await bench.publish()
        for put in bench.s3.requests where put.method == "PUT" && put.key != Bench.manifestKey {
            let key = try #require(put.key)
            let expected =
                key.contains("/revisions/")
                ? CacheControl.immutable : key.hasPrefix("mobile/globex/") ? "public, max-age=60" : "public, max-age=5"
            #expect(put.header("Cache-Control") == expected, "\(key)")
            #expect(try bench.s3.manifest()?.entries[String(key.dropFirst("mobile/".count))]?.cacheControl == expected)
        }
    }

    @Test("Publishing again with nothing changed is one GET of the manifest: no PUT, no purge, logged unchanged")
    func unchangedIsOneGet() async throws {
        var bench = try await Bench()
        bench.settings.purge = PurgeHook(url: FakeS3.hookURL, secret: Bench.secret)
        _ = await bench.publish()
        let mark = bench.s3.received.count
        let report = await bench.publish()
        #expect(Array(bench.s3.received.dropFirst(mark)).map(\.description) == ["GET mobile/manifest.json"])
        #expect(report.error == nil && report.outcome == .unchanged && report.written.isEmpty)
        #expect(report.requests == ["GET": 1])
        #expect(report.items.count == 12 && report.items.allSatisfy { $0.reason == nil })
        #expect(report.purges.isEmpty)
        let log = try await bench.log()
        #expect(log.values.allSatisfy { $0.last.outcome == .unchanged && $0.last.objectsWritten == 0 })
        #expect(log.values.allSatisfy { $0.last.purge == nil })
    }

    @Test("After one environment changes, only its new objects go up, the manifest dropping what is replaced first")
    func oneEnvironmentChanged() async throws {
        let bench = try await Bench()
        _ = await bench.publish()
        let before = try #require(try bench.s3.manifest())
        try await bench.change(Bench.acme, to: "second")
        let revision = try #require(try await bench.store.catalog.publishedRevisions(of: [Bench.acme]).first)
        let new = try PublishedObject.objects(of: revision, defaultCacheControl: CacheControl.standard)
        // A current document whose bytes did not change (configs.json, maybe) is not sent again.
        let changed = Set(
            new.filter { !$0.isImmutable && before.entries[$0.key]?.sha256 != $0.sha256 }.map { "mobile/\($0.key)" })
        #expect(changed.contains("mobile/acme/production/features.json"))

        let mark = bench.s3.received.count
        let report = await bench.publish()
        #expect(report.error == nil)
        let requests = bench.requests(after: mark)
        let lines = Bench.lines(requests)
        #expect(lines.count == 1 + 3 + 1 + changed.count + 1, "\(lines)")
        #expect(lines.first == "GET mobile/manifest.json")
        #expect(Set(requests.dropFirst().prefix(3).compactMap(\.key)) == Bench.copies(Bench.acme, revision: 2))
        #expect(lines[4] == "PUT mobile/manifest.json", "the manifest, without the documents about to be replaced")
        #expect(Set(requests.dropFirst(5).prefix(changed.count).compactMap(\.key)) == changed)
        #expect(lines.last == "PUT mobile/manifest.json")
        #expect(!requests.contains { $0.key?.hasPrefix("mobile/globex/") == true }, "nothing of the other one")

        let interim = try Manifest(parsing: try #require(requests[4].body))
        var expectedInterim = before
        for key in changed { expectedInterim.entries[String(key.dropFirst("mobile/".count))] = nil }
        #expect(interim == expectedInterim)
        let after = try #require(try bench.s3.manifest())
        for object in new { #expect(after.entries[object.key] == object.entry, "\(object.key)") }
        // Revision 2's copies replace revision 1's in the manifest (they stay in the bucket), so an
        // expiry rule on revisions/ never removes what the manifest names.
        #expect(after.entries.count == before.entries.count)
        #expect(!after.entries.keys.contains { $0.hasPrefix("acme/production/revisions/1/") })
        #expect(bench.s3.keys.contains("mobile/acme/production/revisions/1/features.json"), "nothing is deleted")
        #expect(bench.s3.violations.isEmpty, "\(bench.s3.violations)")

        let reasons = Dictionary(report.items.map { ($0.key, $0.reason) }, uniquingKeysWith: { $1 })
        #expect(reasons["mobile/acme/production/revisions/2/features.json"] == "new revision")
        #expect(reasons["mobile/acme/production/features.json"] == "changed (revision 1 → 2)")
        #expect(reasons["mobile/globex/production/features.json"] == .some(nil))
        let log = try await bench.log()
        #expect(
            log[Bench.acme]?.last.outcome == .published && log[Bench.acme]?.last.objectsWritten == 3 + changed.count)
        #expect(log[Bench.acme]?.last.revision == 2)
        #expect(log[Bench.globex]?.last.outcome == .unchanged && log[Bench.globex]?.last.objectsWritten == 0)
    }

    @Test("A Cache-Control change alone re-sends that environment's current documents, same bytes, and nothing else")
    func cacheControlChangeAlone() async throws {
        let bench = try await Bench()
        _ = await bench.publish()
        let before = Bench.current(Bench.acme).sorted().map { bench.s3.object($0)?.bytes }
        try await bench.store.access.updateDelivery(of: Bench.acme) { $0.cacheControl = "public, max-age=5" }
        let mark = bench.s3.received.count
        let report = await bench.publish()
        let requests = bench.requests(after: mark)
        let documents = requests.filter { $0.method == "PUT" && $0.key != Bench.manifestKey }
        #expect(Set(documents.compactMap(\.key)) == Bench.current(Bench.acme) && documents.count == 3)
        #expect(documents.allSatisfy { $0.header("Cache-Control") == "public, max-age=5" })
        #expect(Bench.current(Bench.acme).sorted().map { bench.s3.object($0)?.bytes } == before)
        #expect(Bench.lines(requests).filter { $0 == "PUT mobile/manifest.json" }.count == 2)
        #expect(report.items.filter { $0.reason != nil }.allSatisfy { $0.reason == "Cache-Control changed" })
        #expect(bench.s3.violations.isEmpty, "\(bench.s3.violations)")
    }

    @Test("A dry run reads the manifest, writes nothing, logs nothing, and gives each object its reason")
    func dryRun() async throws {
        let bench = try await Bench()
        let first = await bench.publish(dryRun: true)
        #expect(Bench.lines(bench.s3.requests) == ["GET mobile/manifest.json"])
        #expect(first.error == nil && first.manifestPending && !first.manifestWritten && first.written.isEmpty)
        #expect(first.items.count == 12 && first.items.allSatisfy { $0.reason == "the bucket has no manifest yet" })
        #expect(bench.s3.keys.isEmpty)
        #expect(try await bench.store.outbound.publishStatus().isEmpty, "a dry run adds nothing to the publish log")

        _ = await bench.publish()
        try await bench.change(Bench.globex, to: "second")
        let mark = bench.s3.received.count
        let second = await bench.publish(dryRun: true)
        #expect(Bench.lines(bench.requests(after: mark)) == ["GET mobile/manifest.json"])
        let sent = second.items.filter { $0.reason != nil }
        #expect(sent.allSatisfy { $0.object.environment == Bench.globex })
        #expect(sent.filter(\.object.isImmutable).allSatisfy { $0.reason == "new revision" } && sent.count >= 4)
        #expect(sent.filter { !$0.object.isImmutable }.allSatisfy { $0.reason == "changed (revision 1 → 2)" })
        #expect(second.manifestPending)
    }

    @Test("A run that fails partway names only objects with its bytes; the next completes it, replacing no copy")
    func failureThenResume() async throws {
        var bench = try await Bench()
        bench.settings.purge = PurgeHook(url: FakeS3.hookURL, secret: Bench.secret)
        let scope = PublishScope(tenant: Bench.acme.tenant, environment: .production)
        _ = await bench.publish(scope)
        try await bench.change(Bench.acme, to: "second")
        let failing = "mobile/acme/production/features.json.gz"
        bench.s3.failing { request, _ in request.key == failing ? .answer(503, code: "SlowDown") : nil }

        var mark = bench.s3.received.count
        let failed = await bench.publish(scope)
        guard case .storage(let failure)? = failed.error else {
            Issue.record("expected a storage failure, got \(String(describing: failed.error))")
            return
        }
        #expect(failure.status == 503 && failure.code == "SlowDown" && failure.attempts == 3)
        #expect(bench.requests(after: mark).filter { $0.key == failing }.count == 3, "sent the policy's 3 times")
        #expect(!failed.manifestWritten && failed.outcome == .failed)
        let landedPuts = bench.requests(after: mark).filter { $0.method == "PUT" && $0.key != failing }
        #expect(
            Set(failed.written) == Set(landedPuts.compactMap(\.key)), "exactly what S3 took, interim manifest included")
        let interim = try #require(try bench.s3.manifest())
        #expect(interim.entries["acme/production/features.json"] == nil, "not named while it is being replaced")
        #expect(interim.entries["acme/production/features.json.gz"] == nil)
        #expect(bench.s3.violations.isEmpty, "\(bench.s3.violations)")
        #expect(bench.s3.hookCalls.count == 1, "only the first publish's: a failed run sends no purge")
        let log = try await bench.log()
        #expect(log[Bench.acme]?.last.outcome == .failed && log[Bench.acme]?.state == .failing(failure.description))
        #expect(log[Bench.acme]?.last.error?.contains("503 SlowDown") == true)

        bench.s3.failing { _, _ in nil }
        let landed = Bench.copies(Bench.acme, revision: 2)
        let copies = landed.sorted().map { bench.s3.object($0)?.bytes }
        mark = bench.s3.received.count
        let resumed = await bench.publish(scope)
        #expect(resumed.error == nil && resumed.manifestWritten)
        let requests = bench.requests(after: mark)
        // The interim manifest names neither the copies nor the replaced documents; the log says the
        // last run at this revision failed, so each copy is asked for first (HEAD), found with its
        // own bytes, and neither sent again nor replaced.
        let copyRequests = requests.filter { landed.contains($0.key ?? "") }
        #expect(Bench.lines(copyRequests).sorted() == landed.sorted().map { "HEAD \($0)" })
        #expect(landed.sorted().map { bench.s3.object($0)?.bytes } == copies)
        #expect(Bench.lines(requests).filter { $0 == "PUT mobile/manifest.json" }.count == 1, "no interim needed now")
        #expect(Bench.lines(requests).last == "PUT mobile/manifest.json")
        #expect(requests.contains { $0.key == failing && $0.method == "PUT" })
        #expect(!resumed.written.contains { landed.contains($0) }, "a copy met again is not counted as written")
        let manifest = try #require(try bench.s3.manifest())
        #expect(manifest.entries["acme/production/features.json.gz"]?.revision == 2)
        #expect(bench.s3.violations.isEmpty, "\(bench.s3.violations)")
        #expect(bench.s3.hookCalls.count == 2, "the completed run purges")
        #expect(try await bench.log()[Bench.acme]?.state == .upToDate)
    }

    @Test(
        "A copy whose PUT landed but whose answer was lost meets itself (412), is checked by HEAD, and the run goes on")
    func lostAnswerOfACopy() async throws {
        let bench = try await Bench()
        let key = "mobile/acme/production/revisions/1/features.json"
        bench.s3.failing { request, earlier in
            request.method == "PUT" && request.key == key && earlier == 0 ? .lostAnswer : nil
        }
        let report = await bench.publish()
        #expect(report.error == nil && report.manifestWritten)
        #expect(Bench.lines(bench.s3.requests.filter { $0.key == key }) == ["PUT \(key)", "PUT \(key)", "HEAD \(key)"])
        #expect(bench.s3.violations.isEmpty, "\(bench.s3.violations)")
    }

    @Test("A copy already in the bucket with other bytes stops the run before any current document or manifest")
    func immutableConflict() async throws {
        var bench = try await Bench()
        bench.settings.concurrency = 1
        let key = "mobile/acme/production/revisions/1/features.json"
        bench.s3.store(key, Array("another database's revision 1".utf8))
        let report = await bench.publish(PublishScope(tenant: Bench.acme.tenant))
        #expect(report.error == .immutableConflict(key: key, target: "s3://flags"))
        #expect(Bench.lines(bench.s3.requests) == ["GET mobile/manifest.json", "PUT \(key)", "HEAD \(key)"])
        #expect(bench.s3.object(key)?.bytes == Array("another database's revision 1".utf8), "never replaced")
        #expect(bench.s3.keys == [key])
    }

    @Test("A copy the bucket says exists (412) and then doesn't (404) is a failure worth retrying, not 'other bytes'")
    func unsettledCopy() async throws {
        var bench = try await Bench()
        bench.settings.concurrency = 1
        let key = "mobile/acme/production/revisions/1/features.json"
        bench.s3.failing { request, _ in
            request.key == key
                ? request.method == "PUT"
                    ? .answer(412, code: "PreconditionFailed")
                    : request.method == "HEAD" ? .answer(404, code: "NotFound") : nil
                : nil
        }
        let report = await bench.publish(PublishScope(tenant: Bench.acme.tenant))
        #expect(report.error == .unsettled(key: key, target: "s3://flags"))
        #expect(report.error?.isWorthRetrying == true)
        #expect(report.error?.description.contains("other bytes") == false)
        #expect(!report.manifestWritten)
    }

    @Test("The publish log names a custom endpoint beside the bucket, and only a custom one")
    func loggedTargetNamesTheEndpoint() async throws {
        let bench = try await Bench()
        let report = await bench.publish()
        #expect(report.loggedTarget == "\(report.target) at \(FakeS3.endpoint)")
        #expect(report.logEntries.allSatisfy { $0.target == report.loggedTarget })
        var aws = report
        aws.endpoint = "https://s3.eu-west-1.amazonaws.com"
        #expect(aws.loggedTarget == report.target.description)
    }

    @Test("After the first failure no new write starts, and a bad request is not sent again")
    func noWriteAfterAFailure() async throws {
        var bench = try await Bench()
        bench.settings.concurrency = 1
        bench.s3.failing { request, _ in request.method == "PUT" ? .answer(400, code: "InvalidArgument") : nil }
        let report = await bench.publish()
        #expect(Bench.lines(bench.s3.requests).count == 2, "\(Bench.lines(bench.s3.requests))")
        #expect(report.written.isEmpty && report.error?.isWorthRetrying == false)
        #expect(bench.s3.keys.isEmpty)
    }

    @Test("A manifest Flagpole did not write stops the run before anything is written")
    func foreignManifest() async throws {
        let bench = try await Bench()
        bench.s3.store(Bench.manifestKey, Array("[]".utf8))
        let report = await bench.publish()
        guard case .foreignManifest? = report.error else {
            Issue.record("expected a foreign manifest, got \(String(describing: report.error))")
            return
        }
        #expect(Bench.lines(bench.s3.requests) == ["GET mobile/manifest.json"])
    }

    @Test("publicRead gives public environments' objects public-read; never a private one's, nor the manifest")
    func publicAndPrivate() async throws {
        var bench = try await Bench()
        bench.settings.publicRead = true
        let report = await bench.publish(PublishScope(includePrivate: [Bench.staging]))
        #expect(report.error == nil && report.skippedPrivate.isEmpty)
        let puts = bench.s3.requests.filter { $0.method == "PUT" }
        #expect(puts.count == 19)
        for put in puts {
            let key = try #require(put.key)
            if key == Bench.manifestKey {
                #expect(put.header("x-amz-acl") == nil, "the manifest names private environments' objects too")
            } else if key.hasPrefix(Bench.folder(Bench.staging)) {
                #expect(put.header("x-amz-acl") == nil, "\(key)")
                #expect(
                    put.header("Cache-Control")
                        == (key.contains("/revisions/")
                            ? "private, max-age=31536000, immutable" : "private, max-age=30"),
                    "\(key)")
            } else {
                #expect(put.header("x-amz-acl") == "public-read", "\(key)")
                #expect(put.header("Cache-Control")?.hasPrefix("public") == true, "\(key)")
            }
        }
        #expect(try bench.s3.manifest()?.entries.values.filter { $0.environment == Bench.staging }.count == 6)
    }

    @Test(
        "A private environment with a Cache-Control of its own still gets no public ACL, and `private` in front of its own"
    )
    func privateWithItsOwnCacheControl() async throws {
        var bench = try await Bench()
        bench.settings.publicRead = true
        try await bench.store.access.updateDelivery(of: Bench.staging) { $0.cacheControl = "max-age=60" }
        _ = await bench.publish(PublishScope(tenant: Bench.acme.tenant, includePrivate: [Bench.staging]))
        let staging = bench.s3.requests.filter { $0.method == "PUT" && $0.key?.contains("/staging/") == true }
        #expect(staging.count == 6)
        #expect(staging.allSatisfy { $0.header("x-amz-acl") == nil })
        let current = staging.filter { $0.key?.contains("/revisions/") == false }
        #expect(!current.isEmpty && current.allSatisfy { $0.header("cache-control") == "private, max-age=60" })
    }

    @Test("Publishing one tenant sends only its objects and keeps the others' entries in the manifest")
    func scopeKeepsTheOthers() async throws {
        let bench = try await Bench()
        _ = await bench.publish()
        let before = try #require(try bench.s3.manifest())
        try await bench.change(Bench.acme, to: "second")
        try await bench.change(Bench.globex, to: "second")
        let mark = bench.s3.received.count
        let report = await bench.publish(PublishScope(tenant: Bench.acme.tenant))
        #expect(Set(report.revisions.keys) == [Bench.acme])
        #expect(!bench.requests(after: mark).contains { $0.key?.hasPrefix("mobile/globex/") == true })
        let after = try #require(try bench.s3.manifest())
        let globex = { (manifest: Manifest) in manifest.entries.filter { $0.value.environment == Bench.globex } }
        #expect(globex(after) == globex(before) && globex(after).count == 6)
    }

    @Test("After success, one signed POST per environment whose current documents changed, naming their CDN URLs")
    func purgeHookAfterSuccess() async throws {
        var bench = try await Bench()
        bench.settings.purge = PurgeHook(
            url: FakeS3.hookURL, secret: Bench.secret, publicBaseURL: "https://cdn.example.com/flags/")
        let report = await bench.publish()
        #expect(report.purges.count == 2 && report.purges.values.allSatisfy { $0 == nil })
        let received = bench.s3.received
        let lastManifest = try #require(received.lastIndex { $0.key == Bench.manifestKey })
        #expect(received.indices.filter { received[$0].key == nil }.allSatisfy { $0 > lastManifest })
        var named: [String: JSONValue] = [:]
        for call in bench.s3.hookCalls {
            let body = try #require(call.body)
            #expect(call.method == "POST" && call.header("Content-Type") == "application/json")
            let mac = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: Bench.secret))
            #expect(call.header(PurgeHook.signatureHeader) == "sha256=" + Hex.encode(mac))
            let fields = try Bench.fields(of: call)
            guard case .string(let tenant)? = fields["tenant"] else {
                Issue.record("the hook's body has no tenant: \(fields)")
                continue
            }
            #expect(fields["environment"] == .string("production") && fields["revision"] == .number(1))
            #expect(fields["target"] == .string(Bench.target))
            named[tenant] = fields["urls"]
        }
        let urls = { (tenant: String) -> JSONValue in
            .array(
                ["configs.json", "features.json", "features.json.gz"].map {
                    .string("https://cdn.example.com/flags/mobile/\(tenant)/production/\($0)")
                })
        }
        #expect(named == ["acme": urls("acme"), "globex": urls("globex")], "current documents only, sorted")
        let log = try await bench.log()
        #expect(log.values.allSatisfy { $0.last.purge == .sent && $0.last.purgeError == nil })

        // Next, one environment changes: one hook, for it, naming only what changed.
        try await bench.change(Bench.globex, to: "second")
        let calls = bench.s3.hookCalls.count
        _ = await bench.publish()
        let fields = try Bench.fields(of: try #require(bench.s3.hookCalls.dropFirst(calls).first))
        #expect(bench.s3.hookCalls.count == calls + 1)
        #expect(fields["tenant"] == .string("globex") && fields["revision"] == .number(2))
        guard case .array(let urls)? = fields["urls"] else {
            Issue.record("the hook's body has no urls: \(fields)")
            return
        }
        let purged = urls.compactMap { url -> String? in if case .string(let text) = url { text } else { nil } }
        #expect(purged.contains("https://cdn.example.com/flags/mobile/globex/production/features.json"))
        #expect(purged.allSatisfy { $0.hasPrefix("https://cdn.example.com/flags/mobile/globex/production/") })
        #expect(!purged.contains { $0.contains("/revisions/") }, "a new copy is in no cache: never purged")
    }

    @Test("Without a public base URL, the purge names the objects' own URLs at the endpoint")
    func purgeURLsAtTheEndpoint() async throws {
        var bench = try await Bench()
        bench.settings.purge = PurgeHook(url: FakeS3.hookURL, secret: Bench.secret)
        _ = await bench.publish(PublishScope(tenant: Bench.acme.tenant))
        let fields = try Bench.fields(of: try #require(bench.s3.hookCalls.first))
        #expect(
            fields["urls"]
                == .array(
                    ["configs.json", "features.json", "features.json.gz"].map {
                        .string("http://s3.test:9000/flags/mobile/acme/production/\($0)")
                    }))
    }

    @Test("A purge hook is sent again on a 5xx, not on another 4xx; its failure is logged, the publish succeeds")
    func purgeRetriesAndFailure() async throws {
        var bench = try await Bench()
        let fast = RetryPolicy(attempts: 3, firstDelay: .zero, longest: .zero, timeout: .seconds(5))
        bench.settings.purge = PurgeHook(url: FakeS3.hookURL, secret: Bench.secret, retries: fast)
        let scope = PublishScope(tenant: Bench.acme.tenant, environment: .production)
        bench.s3.answerHook(503, 502)
        let first = await bench.publish(scope)
        #expect(bench.s3.hookCalls.count == 3)
        #expect(first.purges[Bench.acme] == .some(nil))
        #expect(Set(bench.s3.hookCalls.map { $0.body ?? [] }).count == 1, "the same signed body each time")

        try await bench.change(Bench.acme, to: "second")
        bench.s3.answerHook(400)
        let second = await bench.publish(scope)
        #expect(bench.s3.hookCalls.count == 4, "a 400 is not sent again")
        #expect(second.error == nil && second.outcome == .published)
        #expect(second.purges[Bench.acme] == "\(FakeS3.hookURL) answered 400 Bad Request")
        let log = try await bench.log()
        #expect(log[Bench.acme]?.last.outcome == .published && log[Bench.acme]?.last.purge == .failed)
        #expect(log[Bench.acme]?.last.purgeError == "\(FakeS3.hookURL) answered 400 Bad Request")
    }
}
