import SQLKit

/// A field of the create/edit form.
struct AdminField: Sendable {
    enum Kind: Sendable {
        case text(maxLength: Int)
        case textarea(maxLength: Int)
        case integer(ClosedRange<Int>)
        case choice([Choice])
        case lookup(Lookup)
        case checkbox
        case datetime
        /// Checkboxes named `name[]`, not a column (see `afterSave`).
        case multiLookup(Lookup)
        /// ISO 3166-1 alpha-2 codes typed as "FR, BE" into a `text[]` column (blank: none).
        case countries
    }
    let name: String
    let label: String
    let kind: Kind
    var required = false
    var help: String?
    /// Blank means NULL (rather than an error when required, or "" for text).
    var nullable = false
    var defaultValue: String?

    var stored: Bool {
        if case .multiLookup = kind { return false }
        return true
    }

    var lookup: Lookup? {
        switch kind {
        case .lookup(let lookup), .multiLookup(let lookup): return lookup
        default: return nil
        }
    }

    /// The SQL type a bound value is cast to.
    var sqlType: SQLFragment {
        switch kind {
        case .text, .textarea, .choice: return "text"
        case .integer: return "integer"
        case .lookup: return "bigint"
        case .checkbox: return "boolean"
        case .datetime: return "timestamptz"
        case .multiLookup: return "bigint[]"
        case .countries: return "text[]"
        }
    }

    /// The stored value as the form shows it, as text under the field's name.
    var formValue: any SQLExpression {
        let column = SQLColumn(name, table: "t")
        let shown: SQLQueryString
        switch kind {
        case .datetime: shown = "to_char(\(column) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI')"
        case .checkbox: shown = "CASE WHEN \(column) THEN 'on' END"
        case .countries: shown = "array_to_string(\(column), ', ')"
        default: shown = "\(column)::text"
        }
        return SQLAlias(shown, as: SQLIdentifier(name))
    }
}
