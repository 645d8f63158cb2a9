/// The catalogue: features, configs, targeting (rules and segments), revisions with their plans, import, export, edits, rollback and a feature's history. `store.catalog`.
public struct Catalog: StoreService {
    let store: FeatureStore
}
