/// One row of `prerecord`'s JSON argument.
struct PrerecordCandidate: Encodable {
    let ordinal: Int
    let first: PendingFirst

    enum CodingKeys: String, CodingKey {
        case ordinal, point, variation, revision, rule, pinned
        case tenantID = "tenant_id"
        case environmentID = "environment_id"
        case featureID = "feature_id"
        case userID = "user_id"
        case appPoint = "app_point"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        let assignment = first.assignment
        try container.encode(ordinal, forKey: .ordinal)
        try container.encode(first.head.scope.tenant.id, forKey: .tenantID)
        try container.encode(first.head.scope.id, forKey: .environmentID)
        try container.encode(first.featureID, forKey: .featureID)
        try container.encode(first.user.rawValue, forKey: .userID)
        try container.encode(assignment.point, forKey: .point)
        try container.encode(assignment.variation, forKey: .variation)
        try container.encode(assignment.revision, forKey: .revision)
        try container.encodeIfPresent(assignment.rule, forKey: .rule)
        try container.encode(assignment.isPinned, forKey: .pinned)
        try container.encodeIfPresent(assignment.appPoint, forKey: .appPoint)
    }
}
