import Core
import Foundation
import SQLKit

/// A submitted form: the raw text (to show the user's input again) and, once parsed, typed
/// values ready to bind.
struct FormValues: Sendable {
    enum Value: Sendable, Equatable {
        case text(String), integer(Int), bool(Bool), date(Date), null, ids([Int]), codes([String])
    }

    var raw: [String: String] = [:]
    var lists: [String: [String]] = [:]
    private(set) var values: [String: Value] = [:]

    subscript(name: String) -> Value? { values[name] }

    func integer(_ name: String) -> Int? {
        if case .integer(let value)? = values[name] { return value }
        return nil
    }

    func date(_ name: String) -> Date? {
        if case .date(let value)? = values[name] { return value }
        return nil
    }

    func ids(_ name: String) -> [Int] {
        if case .ids(let value)? = values[name] { return value }
        return []
    }

    init(form: FormBody, fields: [AdminField]) {
        for field in fields {
            if case .multiLookup = field.kind {
                lists[field.name] = form.values(field.name + "[]")
            } else {
                raw[field.name] = form.value(field.name) ?? ""
            }
        }
    }

    init(raw: [String: String], lists: [String: [String]]) {
        self.raw = raw
        self.lists = lists
    }

    static let dateFormats = ["yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd HH:mm", "yyyy-MM-dd"]

    static func parseDate(_ text: String) -> Date? {
        for format in dateFormats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    /// Parses every field; returns field → message for what is wrong.
    mutating func parse(_ fields: [AdminField]) -> [String: String] {
        var errors: [String: String] = [:]
        for field in fields {
            if case .multiLookup = field.kind {
                let ids = (lists[field.name] ?? []).compactMap { Int($0) }.filter { $0 > 0 }
                if ids.count != (lists[field.name] ?? []).count { errors[field.name] = "Choose from the list." }
                values[field.name] = .ids(Array(Set(ids)).sorted())
                continue
            }
            let text = (raw[field.name] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            if text.unicodeScalars.contains("\u{0}") { errors[field.name] = "Remove the NUL character."; continue }
            if case .checkbox = field.kind {
                values[field.name] = .bool(!text.isEmpty)
                continue
            }
            if case .countries = field.kind {
                switch Territories.parse(text) {
                case .success(let codes): values[field.name] = .codes(codes)
                case .failure(let unknown): errors[field.name] = unknown.message
                }
                continue
            }
            if text.isEmpty {
                if field.required && !field.nullable { errors[field.name] = "This field is required." }
                else if field.nullable { values[field.name] = .null }
                else { values[field.name] = .text("") }
                continue
            }
            switch field.kind {
            case .text(let max), .textarea(let max):
                if text.count > max { errors[field.name] = "Use at most \(max) characters." }
                else { values[field.name] = .text(text) }
            case .integer(let range):
                if let number = Int(text), range.contains(number) { values[field.name] = .integer(number) }
                else { errors[field.name] = "Enter a whole number from \(range.lowerBound) to \(range.upperBound)." }
            case .choice(let choices):
                if choices.contains(where: { $0.value == text }) { values[field.name] = .text(text) }
                else { errors[field.name] = "Choose one of: \(choices.map(\.label).joined(separator: ", "))." }
            case .lookup:
                if let id = Int(text), id > 0 { values[field.name] = .integer(id) }
                else { errors[field.name] = "Choose from the list." }
            case .datetime:
                if let date = Self.parseDate(text) { values[field.name] = .date(date) }
                else { errors[field.name] = "Enter a date and time like 2026-11-22T09:30 (UTC)." }
            case .checkbox, .multiLookup, .countries:
                break
            }
        }
        return errors
    }

    /// The bound value of a stored field, cast to the column's kind.
    func bound(_ field: AdminField) -> SQLQueryString {
        let cast = field.sqlType
        switch values[field.name] ?? .null {
        case .text(let value): return "\(bind: value)::\(cast)"
        case .integer(let value): return "\(bind: value)::\(cast)"
        case .bool(let value): return "\(bind: value)::\(cast)"
        case .date(let value): return "\(bind: value)::\(cast)"
        case .ids(let value): return "\(bind: value)::\(cast)"
        case .codes(let value): return "\(bind: value)::\(cast)"
        case .null: return "NULL::\(cast)"
        }
    }
}
