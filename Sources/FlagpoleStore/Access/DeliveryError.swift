import FlagpoleCore

/// Why an operation on how an environment's shared document is served failed, worded for the person who can fix it.
public enum DeliveryError: FlagpoleError {
    /// A delivery setting the server could not send as given.
    case invalidCacheControl(String)
    /// A private environment's documents must not be kept by shared caches.
    case publicCacheControlOnPrivate(String)

    public var description: String {
        switch self {
        case .invalidCacheControl(let value):
            "\"\(value)\" is not a usable Cache-Control value: it must be 1 to 256 printable ASCII characters. Example: \"public, max-age=60\"."
        case .publicCacheControlOnPrivate(let value):
            "A private environment cannot be served with Cache-Control \"\(value)\": a shared cache would hand the document to anyone. Use a private value, such as \"private, max-age=30\", or null for the default."
        }
    }

    public var code: String {
        switch self {
        case .invalidCacheControl, .publicCacheControlOnPrivate: "invalid"
        }
    }
}
