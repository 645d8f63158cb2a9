import FlagpoleCore
import FlagpolePublish
import FlagpoleStore
import Foundation

/// How `flagpole publish` and `publish status` print what they did or found.
enum PublishOutput {
    static func print(_ report: PublishReport) {
        let destination = "\(report.target)\(report.endpoint.isEmpty ? "" : " at \(report.endpoint)")"
        for path in report.skippedPrivate {
            Console.error("skipped \(path): private (publish it with --include-private \(path))")
        }
        let sending = report.items.filter { $0.reason != nil }
        let written = Set(report.written)
        if report.dryRun {
            for item in sending { Console.out("would upload  \(item.key)  (\(item.reason!))") }
            if report.manifestPending { Console.out("would upload  \(report.target.key(Manifest.name))  (last)") }
        } else {
            for item in sending where written.contains(item.key) {
                Console.out("uploaded  \(item.key)  (\(item.reason!))")
            }
        }
        let unchanged = report.items.count - sending.count
        let environments = report.revisions.count
        let summary =
            "\(environments) environment\(environments == 1 ? "" : "s"), \(report.items.count) objects (\(unchanged) already in the bucket)"
        let requests = report.requests.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(
            separator: ", ")
        let timing = String(format: "%.2f s", report.finishedAt.timeIntervalSince(report.startedAt))
        if let error = report.error {
            Console.error("Publish to \(destination) failed: \(error)")
            let manifest = report.target.key(Manifest.name)
            let objects = report.written.filter { $0 != manifest }
            if objects.isEmpty {
                Console.error("No object was written.")
            } else {
                Console.error("Written before the failure (\(objects.count)), which the manifest does not name yet:")
                for key in objects { Console.error("  \(key)") }
            }
            if report.written.contains(manifest) {
                Console.error(
                    "\(manifest) was rewritten without the documents this publish was replacing: it names only complete objects."
                )
            } else {
                Console.error("\(manifest) is left as it was: it names only complete objects.")
            }
            if error.isWorthRetrying { Console.error("Run the same publish again to complete it.") }
        } else if report.dryRun {
            Console.out("Dry run for \(destination): \(summary); \(sending.count) to upload. Nothing was written.")
        } else if report.written.isEmpty {
            Console.out("\(destination) is up to date: \(summary). Nothing written (\(requests), \(timing)).")
        } else {
            Console.out(
                "Published to \(destination): \(summary); wrote \(report.written.count) objects, manifest.json last (\(requests), \(timing))."
            )
        }
        for (path, failure) in report.purges.sorted(by: { $0.key.description < $1.key.description }) {
            if let failure {
                Console.error("purge hook for \(path) failed: \(failure)")
            } else {
                Console.out("purge hook sent for \(path)")
            }
        }
    }

    static func json(of report: PublishReport) -> JSONValue {
        let written = Set(report.written)
        let environments = report.revisions.keys.sorted { $0.description < $1.description }.map { path -> JSONValue in
            let purge: JSONValue =
                switch report.purges[path] {
                case .none: .null
                case .some(.none): ["outcome": .string("sent")]
                case .some(.some(let error)): ["outcome": .string("failed"), "error": .string(error)]
                }
            return [
                "tenant": .string(path.tenant.rawValue), "environment": .string(path.environment.rawValue),
                "revision": .number(Double(report.revisions[path]!)),
                "objectsWritten": .number(Double(report.written(for: path))), "purge": purge,
            ]
        }
        let objects = report.items.map { item -> JSONValue in
            [
                "key": .string(item.key), "tenant": .string(item.object.environment.tenant.rawValue),
                "environment": .string(item.object.environment.environment.rawValue),
                "revision": .number(Double(item.object.revision)), "sha256": .string(item.object.sha256),
                "size": .number(Double(item.object.bytes.count)),
                "action": .string(
                    item.reason == nil ? "unchanged" : written.contains(item.key) ? "uploaded" : "upload"),
                "reason": item.reason.map(JSONValue.string) ?? .null,
            ]
        }
        return [
            "target": .string(report.target.description), "endpoint": .string(report.endpoint),
            "dryRun": .bool(report.dryRun), "outcome": .string(report.outcome.rawValue),
            "error": report.error.map { .string($0.description) } ?? .null,
            "environments": .array(environments), "objects": .array(objects),
            "written": .array(report.written.map(JSONValue.string)),
            "manifestWritten": .bool(report.manifestWritten),
            "skippedPrivate": .array(report.skippedPrivate.map { .string($0.description) }),
            "requests": .object(
                JSONObject(
                    report.requests.sorted { $0.key < $1.key }.map {
                        JSONObject.Member(key: $0.key, value: .number(Double($0.value)))
                    })),
            "seconds": .number((report.finishedAt.timeIntervalSince(report.startedAt) * 1000).rounded() / 1000),
        ]
    }

    static func print(_ statuses: [PublishStatus]) {
        for (target, rows) in Dictionary(grouping: statuses, by: \.last.target).sorted(by: { $0.key < $1.key }) {
            Console.out(target)
            var table = TextTable("  ENVIRONMENT", "PUBLISHED", "STATE")
            for status in rows {
                let published =
                    status.publishedRevision.map { "revision \($0) at \(status.publishedAt!.formatted(.iso8601))" }
                    ?? "never"
                table.rows.append(
                    [
                        "  \(status.last.environment)", published,
                        describe(status.state, current: status.currentRevision),
                    ])
            }
            Console.out(table.text)
        }
    }

    static func describe(_ state: PublishStatus.State, current: Int?) -> String {
        switch state {
        case .upToDate: "up to date"
        case .behind(let count): "behind by \(count) (current revision \(current ?? 0))"
        case .failing(let error): "failing: \(error)"
        }
    }

    static func json(of status: PublishStatus) -> JSONValue {
        let state: String
        switch status.state {
        case .upToDate: state = "upToDate"
        case .behind: state = "behind"
        case .failing: state = "failing"
        }
        return [
            "target": .string(status.last.target), "tenant": .string(status.last.environment.tenant.rawValue),
            "environment": .string(status.last.environment.environment.rawValue),
            "state": .string(state),
            "currentRevision": status.currentRevision.map { .number(Double($0)) } ?? .null,
            "publishedRevision": status.publishedRevision.map { .number(Double($0)) } ?? .null,
            "publishedAt": status.publishedAt.map { .string($0.formatted(.iso8601)) } ?? .null,
            "lastOutcome": .string(status.last.outcome.rawValue),
            "lastError": status.last.error.map(JSONValue.string) ?? .null,
            "lastPurge": status.last.purge.map { .string($0.rawValue) } ?? .null,
            "lastAttemptAt": .string(status.last.finishedAt.formatted(.iso8601)),
        ]
    }
}
