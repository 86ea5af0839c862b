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

    /// `YYYY-MM-DD`, optionally followed by `T` or a space and `HH:mm` or `HH:mm:ss`, in UTC (what a
    /// `datetime-local` input and a spreadsheet send). Read by hand: a CSV import parses 100,000.
    static func parseDate(_ text: String) -> Date? {
        let b = Array(text.utf8)
        guard b.count == 10 || b.count == 16 || b.count == 19 else { return nil }
        func number(_ from: Int, _ length: Int) -> Int? {
            var value = 0
            for i in from..<from + length {
                guard b[i] >= 48 && b[i] <= 57 else { return nil }
                value = value * 10 + Int(b[i] - 48)
            }
            return value
        }
        guard b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
              year >= 1, (1...12).contains(month), (1...31).contains(day) else { return nil }
        let days = CivilDays.days(year: year, month: month, day: day)
        guard CivilDays.date(of: days) == (year, month, day) else { return nil }   // no 30 February
        var seconds = 0
        if b.count >= 16 {
            guard b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: " "), b[13] == UInt8(ascii: ":"),
                  let hour = number(11, 2), let minute = number(14, 2), hour < 24, minute < 60 else { return nil }
            seconds = hour * 3600 + minute * 60
            if b.count == 19 {
                guard b[16] == UInt8(ascii: ":"), let second = number(17, 2), second < 60 else { return nil }
                seconds += second
            }
        }
        return Date(timeIntervalSince1970: Double(days * 86_400 + seconds))
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
            if ConsoleText.hasNUL(text) { errors[field.name] = ConsoleText.nulMessage; continue }
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
