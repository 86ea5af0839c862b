/// What the console does with text typed into it before any statement sees it: PostgreSQL
/// refuses a NUL character in text (SQLSTATE 22021), so a search with one is no search, and a
/// value with one is refused with the reason beside it — never a 500.
enum ConsoleText {
    /// A search box's text, trimmed: nil when empty or when it holds a NUL character.
    static func search(_ text: String?) -> String? {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty, !hasNUL(text) else { return nil }
        return text
    }

    static func hasNUL(_ text: String) -> Bool { text.unicodeScalars.contains("\u{0}") }

    /// The message beside a field whose value holds a NUL character.
    static let nulMessage = "Remove the NUL character."
}
