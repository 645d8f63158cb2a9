/// What leaves Flagpole and what it counts: webhooks and their deliveries, the publish log, fetch counts and refused event batches. `store.outbound`.
public struct Outbound: StoreService {
    let store: FeatureStore
}
