import FlagpoleStore

/// The `Cache-Control` of what Flagpole delivers, the same from its server and from a bucket.
public enum CacheControl {
    /// A shared current document: caches revalidate after 30 s, and may serve a stale copy
    /// while they do or while the origin fails.
    public static let standard = "public, max-age=30, stale-while-revalidate=3600, stale-if-error=86400"
    /// A revision named by its number or content hash never changes: caches may keep it for good.
    public static let immutable = "public, max-age=31536000, immutable"

    /// An environment's current document: its own setting, else the default. A private
    /// environment's never lets a shared cache keep it: its own setting gets `private` in front
    /// when it lacks it (`max-age=60` alone lets a CDN before the bucket keep it for everyone).
    public static func current(_ settings: DeliverySettings, default standard: String) -> String {
        guard settings.isPrivate else { return settings.cacheControl ?? standard }
        guard let own = settings.cacheControl else { return "private, max-age=30" }
        let directives = own.lowercased()
        return directives.contains("private") || directives.contains("no-store") ? own : "private, " + own
    }

    /// A revision's immutable copy: for good, but only in the client's own cache when private.
    public static func revision(_ settings: DeliverySettings) -> String {
        settings.isPrivate ? "private, max-age=31536000, immutable" : immutable
    }
}
