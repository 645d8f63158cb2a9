import FlagpoleCore
import FlagpoleStore

extension DatabaseSummary {
    /// One line of counts: `2 tenants, 3 environments, 14 revisions, 1200 assignments, 3 unlocks`.
    var counts: String {
        [
            Self.counted(tenantCount, "tenant"), Self.counted(environments.count, "environment"),
            Self.counted(revisionCount, "revision"), Self.counted(assignmentCount, "assignment"),
            Self.counted(unlockCount, "unlock"),
        ].joined(separator: ", ")
    }

    /// Every environment and its latest revision, aligned.
    var environmentTable: String {
        var table = TextTable("ENVIRONMENT", "LATEST REVISION")
        for environment in environments {
            table.append(environment.path.description, environment.latestRevision.map(String.init) ?? "none")
        }
        return table.text
    }

    var jsonValue: JSONValue {
        [
            "schema": schemaVersion.map(JSONValue.string) ?? .null,
            "bytes": .number(Double(byteCount)),
            "tenants": .number(Double(tenantCount)),
            "revisions": .number(Double(revisionCount)),
            "assignments": .number(Double(assignmentCount)),
            "unlocks": .number(Double(unlockCount)),
            "environments": .array(
                environments.map { environment in
                    [
                        "tenant": .string(environment.path.tenant.rawValue),
                        "environment": .string(environment.path.environment.rawValue),
                        "revision": environment.latestRevision.map { .number(Double($0)) } ?? .null,
                    ]
                }),
        ]
    }

    private static func counted(_ count: Int, _ noun: String) -> String {
        "\(count) \(noun)\(count == 1 ? "" : "s")"
    }
}
