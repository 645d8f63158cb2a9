extension Feature {
    /// The form in which two feature names are one name, as the app compares them.
    ///
    /// The app decodes names into Swift strings, and Swift's string equality is canonical
    /// equivalence: `"caf\u{E9}"` and `"cafe\u{301}"` (or `"K"` and the Kelvin sign) are one
    /// name on a device. Their NFC forms are byte-equal exactly when the strings are equal, so the
    /// store keys names by this form wherever a database, which compares bytes, decides whether
    /// two names are one: lookups, uniqueness, matching on import.
    ///
    /// It is the standard library's own normalisation, the very one `==` uses, rather than
    /// Foundation's, which may follow another Unicode version and so disagree with `==`.
    public static func nameKey(_ name: String) -> String {
        String(decoding: name._nfcCodeUnits, as: UTF8.self)
    }
}
