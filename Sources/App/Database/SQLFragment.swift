import SQLKit

/// SQL written in the source — a console declaration's column, a join condition, an ordering, the
/// book fragments of `BookSQL`. Only a literal in the source makes one (or the app's own SQL
/// helpers, through `init(trusted:)`), so nothing a user types can become one: their values go in
/// as binds, through `SQLQueryString`.
struct SQLFragment: SQLExpression, ExpressibleByStringLiteral, Hashable, Sendable, CustomStringConvertible {
    let text: String

    init(stringLiteral text: String) { self.text = text }

    /// SQL made by the app's own helpers (e.g. rights availability), never from input.
    init(trusted text: String) { self.text = text }

    func serialize(to serializer: inout SQLSerializer) { serializer.write(text) }

    var description: String { text }
}
