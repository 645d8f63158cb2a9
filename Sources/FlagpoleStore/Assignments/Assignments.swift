/// Users' records: documents and evaluations for each user, first assignments through the group commit, overrides, unlocks, kept attributes, assignment history, and forgetting a user. `store.assignments`.
public struct Assignments: StoreService {
    let store: FeatureStore
}
