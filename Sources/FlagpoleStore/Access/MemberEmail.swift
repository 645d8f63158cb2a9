import Foundation

/// The rules of a member's email and name, checked before anything is written.
enum MemberEmail {
    /// The address as the store keeps it: trimmed and lowercased, so `Ada@Example.com` and
    /// `ada@example.com` are one person.
    ///
    /// - throws: `MemberError.invalidEmail`.
    static func validate(_ text: String) throws -> String {
        let email = normalized(text)
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard email.utf8.count <= 254, parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
            !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
            !email.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } ?? false })
        else { throw MemberError.invalidEmail(text) }
        return email
    }

    /// How an address is looked up, whatever the caller typed: as `validate` stores it.
    static func normalized(_ text: String) -> String {
        text.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// A member's name, trimmed.
    ///
    /// - throws: `MemberError.invalidName`.
    static func validateName(_ text: String) throws -> String {
        let name = text.trimmingCharacters(in: .whitespaces)
        if name.isEmpty { throw MemberError.invalidName("is empty") }
        if name.count > 100 { throw MemberError.invalidName("is longer than 100 characters") }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw MemberError.invalidName("has a control character (a line break or a tab)")
        }
        return name
    }
}
