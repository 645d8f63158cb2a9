/// Who may do what: tenants and their environments (delivery settings, marking), API keys, members, their sign-ins and sessions. `store.access`.
public struct Access: StoreService {
    let store: FeatureStore
}
