import Core
import Vapor

/// A JSON request body read field by field, so each problem names its field: malformed JSON is
/// `invalid_body`; a missing or mistyped field is `invalid_parameter` with `field`.
struct JSONBody: Sendable {
    indirect enum Value: Decodable, Sendable {
        case integer(Int), number(Double), string(String), bool(Bool), null, array([Value]), object([String: Value])

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { self = .null }
            else if let value = try? container.decode(Bool.self) { self = .bool(value) }
            else if let value = try? container.decode(Int.self) { self = .integer(value) }
            else if let value = try? container.decode(Double.self) { self = .number(value) }
            else if let value = try? container.decode(String.self) { self = .string(value) }
            else if let values = try? container.decode([Value].self) { self = .array(values) }
            else { self = .object((try? container.decode([String: Value].self)) ?? [:]) }
        }
    }

    let fields: [String: Value]?
    /// Where these fields sit in the document (`bedtime.`), for the names problems give.
    var path = ""

    init(fields: [String: Value]?, path: String = "") { self.fields = fields; self.path = path }

    /// Whether the body has `name` at all (a `null` counts: it clears).
    func has(_ name: String) -> Bool { fields?[name] != nil }

    /// Whether `name` is present and `null`.
    func isNull(_ name: String) -> Bool {
        if case .null? = fields?[name] { return true }
        return false
    }

    /// `name` as a nested object (`null` and absent are nil).
    func object(_ name: String) throws -> JSONBody? {
        switch fields?[name] {
        case nil, .null?: return nil
        case .object(let fields)?: return JSONBody(fields: fields, path: path + name + ".")
        default: throw Problem.invalidParameter(path + name, "\(path + name) must be an object or null")
        }
    }

    /// `name` as a list of distinct positive integers (at most `limit`; repeats count once, the
    /// order kept); `null` is the empty list, absent nil.
    func integerList(_ name: String, limit: Int) throws -> [Int]? {
        switch fields?[name] {
        case nil: return nil
        case .null?: return []
        case .array(let values)?:
            var seen = Set<Int>(), list: [Int] = []
            for value in values {
                guard case .integer(let id) = value, id > 0 else {
                    throw Problem.invalidParameter(path + name, "\(path + name) must be a list of positive integers")
                }
                if seen.insert(id).inserted { list.append(id) }
            }
            guard list.count <= limit else { throw Problem.invalidParameter(path + name, "\(path + name) may hold at most \(limit) ids") }
            return list
        default: throw Problem.invalidParameter(path + name, "\(path + name) must be a list of positive integers")
        }
    }

    /// `name` as a list of objects (each read with its place in the path, `plays[3].`), between
    /// `count.lowerBound` and `count.upperBound` long.
    func objectList(_ name: String, count: ClosedRange<Int>) throws -> [JSONBody] {
        guard case .array(let values)? = fields?[name] else {
            throw Problem.invalidParameter(path + name, "\(path + name) must be a list of objects")
        }
        guard count.contains(values.count) else {
            throw Problem.invalidParameter(path + name, "\(path + name) must hold \(count.lowerBound) to \(count.upperBound) items")
        }
        return try values.enumerated().map { index, value in
            guard case .object(let fields) = value else {
                throw Problem.invalidParameter("\(path)\(name)[\(index)]", "\(path)\(name)[\(index)] must be an object")
            }
            return JSONBody(fields: fields, path: "\(path)\(name)[\(index)].")
        }
    }

    init(_ request: Request) throws {
        guard let buffer = request.body.data, buffer.readableBytes > 0 else {
            throw Problem.invalidBody("The request needs a JSON body.")
        }
        try self.init(json: Data(buffer.readableBytesView))
    }

    /// A JSON document's top-level object; RFC 8259 exactly (Foundation's parser also takes
    /// trailing commas, comments, NaN, …).
    init(json data: Data) throws {
        guard StrictJSON.isValid(data) else {
            throw Problem.invalidBody("The request body is not valid JSON (RFC 8259).")
        }
        fields = try? JSONDecoder().decode([String: Value].self, from: data)
    }

    func integer(_ name: String, in range: ClosedRange<Int> = Int.min...Int.max) throws -> Int {
        guard case .integer(let value)? = fields?[name] else {
            throw Problem.invalidParameter(path + name, "\(path + name) must be a JSON integer")
        }
        guard range.contains(value) else {
            throw Problem.invalidParameter(path + name, "\(path + name) must be from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    func bool(_ name: String) throws -> Bool {
        guard case .bool(let value)? = fields?[name] else {
            throw Problem.invalidParameter(path + name, "\(path + name) must be true or false")
        }
        return value
    }

    /// Absent and `null` are nil; anything else must be a string.
    func optionalString(_ name: String, maxLength: Int = 1000) throws -> String? {
        switch fields?[name] {
        case nil, .null?: return nil
        default: return try string(name, maxLength: maxLength)
        }
    }

    /// Absent and `null` are nil; anything else must be a JSON integer in `range`.
    func optionalInteger(_ name: String, in range: ClosedRange<Int> = Int.min...Int.max) throws -> Int? {
        switch fields?[name] {
        case nil, .null?: return nil
        default: return try integer(name, in: range)
        }
    }

    /// Absent and `null` are nil; anything else must be true or false.
    func optionalBool(_ name: String) throws -> Bool? {
        switch fields?[name] {
        case nil, .null?: return nil
        default: return try bool(name)
        }
    }

    func string(_ name: String, maxLength: Int = 1000) throws -> String {
        guard case .string(let value)? = fields?[name] else {
            throw Problem.invalidParameter(path + name, "\(path + name) must be a string")
        }
        guard !value.unicodeScalars.contains("\u{0}") else {
            throw Problem.invalidParameter(path + name, "\(path + name) must not contain NUL characters")
        }
        guard value.count <= maxLength else {
            throw Problem.invalidParameter(path + name, "\(path + name) must be at most \(maxLength) characters")
        }
        return value
    }
}
