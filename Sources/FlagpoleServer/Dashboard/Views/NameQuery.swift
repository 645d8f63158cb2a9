/// The text typed in a catalog's name box: a name matches when it contains the text, ignoring
/// case. dashboard.js's search as you type compares the same way (`toLowerCase().includes`),
/// so a reload shows what the typing showed.
struct NameQuery: Sendable, Equatable {
    /// The text as typed, for the box.
    let text: String
    private let needle: String

    init(_ text: String) {
        self.text = text
        needle = text.lowercased()
    }

    var isEmpty: Bool { needle.isEmpty }

    func matches(_ name: String) -> Bool {
        needle.isEmpty || name.lowercased().contains(needle)
    }
}

extension Optional where Wrapped == String {
    /// The text, or `nil` when it is empty: a catalog form's empty field filters nothing.
    var nonEmpty: String? { self.flatMap { $0.isEmpty ? nil : $0 } }
}
