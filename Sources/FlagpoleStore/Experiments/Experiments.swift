/// Experiments: goals, events from apps, exposures, and each test's results (the ledger and its readouts). `store.experiments`.
public struct Experiments: StoreService {
    let store: FeatureStore
}
