import FlagpoleCore
import Testing

/// Tenant slugs and environment names: lowercase letters, digits and hyphens, as in URLs.
@Suite("Slugs")
struct SlugTests {
    @Test(
        "Lowercase letters, digits and inner hyphens are accepted",
        arguments: ["my-app", "a", "app2", "production", "x-1-y"])
    func valid(text: String) throws {
        #expect(try TenantSlug(validating: text).rawValue == text)
        #expect(try EnvironmentName(validating: text).rawValue == text)
    }

    @Test(
        "Anything else is refused with a message naming the value",
        arguments: [
            "", "My-App", "my_app", "my app", "-app", "app-", "café", "app/prod", "../etc",
        ])
    func invalid(text: String) {
        #expect(throws: CoreError.self) { try TenantSlug(validating: text) }
        #expect(throws: CoreError.self) { try EnvironmentName(validating: text) }
        do {
            _ = try TenantSlug(validating: text)
        } catch {
            #expect(error.description.contains("\"\(text)\""))
            #expect(error.description.contains("tenant slug"))
        }
    }

    @Test("The default environment is production")
    func production() {
        #expect(EnvironmentName.production.rawValue == "production")
        #expect(EnvironmentName.production.description == "production")
        #expect(TenantSlug(rawValue: "a") < TenantSlug(rawValue: "b"))
    }
}
