import Vapor

/// A JSON request body read field by field, so each problem names its field: malformed JSON is
/// `invalid_body`; a missing or mistyped field is `invalid_parameter` with `field`.
struct JSONBody: Sendable {
    enum Value: Decodable, Sendable {
        case integer(Int), number(Double), string(String), bool(Bool), null, array, object

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() { self = .null }
            else if let value = try? container.decode(Bool.self) { self = .bool(value) }
            else if let value = try? container.decode(Int.self) { self = .integer(value) }
            else if let value = try? container.decode(Double.self) { self = .number(value) }
            else if let value = try? container.decode(String.self) { self = .string(value) }
            else if (try? container.decode([Skip].self)) != nil { self = .array }
            else { self = .object }
        }
    }

    /// Accepts any JSON value without keeping it.
    private struct Skip: Decodable { init(from decoder: any Decoder) throws {} }

    let fields: [String: Value]?

    init(_ request: Request) throws {
        guard let buffer = request.body.data, buffer.readableBytes > 0 else {
            throw Problem.invalidBody("The request needs a JSON body.")
        }
        let data = Data(buffer.readableBytesView)
        guard (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil else {
            throw Problem.invalidBody("The request body is not valid JSON.")
        }
        fields = try? JSONDecoder().decode([String: Value].self, from: data)
    }

    func integer(_ name: String, in range: ClosedRange<Int> = Int.min...Int.max) throws -> Int {
        guard case .integer(let value)? = fields?[name] else {
            throw Problem.invalidParameter(name, "\(name) must be a JSON integer")
        }
        guard range.contains(value) else {
            throw Problem.invalidParameter(name, "\(name) must be from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    func bool(_ name: String) throws -> Bool {
        guard case .bool(let value)? = fields?[name] else {
            throw Problem.invalidParameter(name, "\(name) must be true or false")
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
            throw Problem.invalidParameter(name, "\(name) must be a string")
        }
        guard !value.unicodeScalars.contains("\u{0}") else {
            throw Problem.invalidParameter(name, "\(name) must not contain NUL characters")
        }
        guard value.count <= maxLength else {
            throw Problem.invalidParameter(name, "\(name) must be at most \(maxLength) characters")
        }
        return value
    }
}
