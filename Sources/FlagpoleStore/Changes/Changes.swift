/// What writes changed: each environment's change sequence, read by the servers, pruned by the tick; and the audit feed of revisions. `store.changes`.
public struct Changes: StoreService {
    let store: FeatureStore
}
