/// Roll-outs that run themselves: ramps (a test's variation grown step by step, each step a
/// revision, docs/RAMPS.md), the guards that pause them, and trigger URLs that an alert in
/// another system calls. `store.rollouts`.
public struct Rollouts: StoreService {
    let store: FeatureStore
}
