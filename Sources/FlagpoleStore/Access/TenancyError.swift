import FlagpoleCore

/// Why an operation on tenants and their environments failed, worded for the person who can fix it.
public enum TenancyError: FlagpoleError {
    case tenantNotFound(TenantSlug)
    case tenantAlreadyExists(TenantSlug)
    case environmentNotFound(EnvironmentPath, existing: [EnvironmentName])
    case environmentAlreadyExists(EnvironmentPath)
    /// An environment's colour that is not `#rrggbb`.
    case invalidColour(String)

    public var description: String {
        switch self {
        case .tenantNotFound(let slug):
            "There is no tenant \"\(slug)\". Create it with `flagpole tenant create \(slug)`, or list tenants with `flagpole tenant list`."
        case .tenantAlreadyExists(let slug):
            "A tenant \"\(slug)\" already exists. Pick another slug, or use the existing tenant."
        case .environmentNotFound(let path, let existing):
            "Tenant \"\(path.tenant)\" has no environment \"\(path.environment)\" (it has: \(existing.map(\.rawValue).joined(separator: ", "))). Create it with `flagpole env create \(path.environment) --tenant \(path.tenant)`."
        case .environmentAlreadyExists(let path):
            "Tenant \"\(path.tenant)\" already has an environment \"\(path.environment)\"."
        case .invalidColour(let text):
            "The environment's colour \"\(text)\" is not a colour: write # and six hexadecimal digits (red, green, blue), such as #c0392b."
        }
    }

    public var code: String {
        switch self {
        case .tenantNotFound, .environmentNotFound: "not_found"
        case .tenantAlreadyExists, .environmentAlreadyExists: "exists"
        case .invalidColour: "invalid"
        }
    }
}
