import SQLKit

struct Choice: Sendable, Codable, Equatable {
    let value: String
    let label: String
}

/// The options of a dropdown read from a table: its ids as values, a column as labels.
struct Lookup: Sendable, Hashable {
    let table: String
    let label: String
    let order: SQLFragment
    /// Too many rows for a select (publishers at 10,000): forms and filters show a text field of
    /// the label with suggestions as you type (`/admin/lookup/<table>?q=`), resolved by name.
    var picker = false

    /// The label of record `id`.
    func label(of id: Int, on sql: any SQLDatabase) async throws -> String? {
        try await sql.raw("SELECT \(ident: label)::text AS label FROM \(ident: table) WHERE id = \(bind: id)").first(decoding: ResourceRows.Label.self)?.label
    }

    /// The record called `name` (case-insensitive; the oldest when several are).
    func id(named name: String, on sql: any SQLDatabase) async throws -> Int? {
        try await sql.raw("SELECT id FROM \(ident: table) WHERE lower(\(ident: label)) = lower(\(bind: name)) ORDER BY id LIMIT 1").first(decoding: ResourceRows.ID.self)?.id
    }

    /// Up to `limit` labels containing `text`, those starting with it first.
    func suggestions(_ text: String, limit: Int = 20, on sql: any SQLDatabase) async throws -> [String] {
        try await sql.raw("""
            SELECT \(ident: label)::text AS label FROM \(ident: table) t WHERE \(TextMatch.contains(SQLFragment(stringLiteral: "t.\(label)"), text))
             ORDER BY lower(\(ident: label)) LIKE lower(\(bind: TextMatch.escaped(text) + "%")) DESC, lower(\(ident: label)), id LIMIT \(bind: limit)
            """).all(decoding: ResourceRows.Label.self).map(\.label)
    }

    /// A filter's condition on `column` for a picker's value: an id (links, saved views) or a name as typed.
    func condition(_ column: SQLFragment, _ value: String) -> SQLQueryString {
        if let id = Int(value) { return "\(column) = \(bind: id)" }
        return "\(column) IN (SELECT id FROM \(ident: table) WHERE lower(\(ident: label)) = lower(\(bind: value)))"
    }

    func choices(on sql: any SQLDatabase) async throws -> [Choice] {
        try await sql.select()
            .column(SQLAlias(SQLQueryString("\(ident: "id")::text"), as: SQLIdentifier("value")))
            .column(SQLAlias(SQLIdentifier(label), as: SQLIdentifier("label")))
            .from(table).orderBy(order).all(decoding: Choice.self)
    }
}

/// Lookups read once per page, however many filters, fields and batch targets share them.
struct LookupCache {
    let sql: any SQLDatabase
    private var loaded: [Lookup: [Choice]] = [:]

    init(sql: any SQLDatabase) { self.sql = sql }

    mutating func choices(_ lookup: Lookup) async throws -> [Choice] {
        if let known = loaded[lookup] { return known }
        let choices = try await lookup.choices(on: sql)
        loaded[lookup] = choices
        return choices
    }

    /// The options of a filter or batch target; nil for a free integer.
    mutating func choices(_ kind: AdminFilter.Kind) async throws -> [Choice]? {
        switch kind {
        case .choices(let choices): return choices
        case .lookup(let lookup): return lookup.picker ? nil : try await choices(lookup)
        case .integer: return nil
        }
    }
}

struct AdminSearch: Sendable {
    let label: String
    /// The condition for what was typed; nil when it cannot match anything meaningful (ignored).
    let condition: @Sendable (String) -> SQLQueryString?
}

struct AdminFilter: Sendable {
    enum Kind: Sendable {
        case choices([Choice])
        case lookup(Lookup)
        case integer(ClosedRange<Int>)
    }
    let name: String
    let label: String
    let kind: Kind
    /// The SQL condition for a valid value; nil when the value is not acceptable (ignored).
    let condition: @Sendable (String) -> SQLQueryString?
}

/// A search box's text in ILIKE, matched literally.
enum TextMatch {
    /// `%` and `_` typed by a user match themselves in ILIKE.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
    }

    /// `column ILIKE '%text%'`.
    static func contains(_ column: SQLFragment, _ text: String) -> SQLQueryString {
        "\(column) ILIKE \(bind: "%" + escaped(text) + "%")"
    }
}
