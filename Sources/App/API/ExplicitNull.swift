/// An optional that encodes as `null` when it has no value, where Swift's synthesized `Encodable`
/// would leave the key out: the parent API always writes every field of its objects. Decoding
/// accepts `null` or a missing key.
@propertyWrapper
struct ExplicitNull<Value: Codable & Sendable>: Codable, Sendable {
    var wrappedValue: Value?

    init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try container.decode(Value.self)
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue)
    }
}

extension ExplicitNull: Equatable where Value: Equatable {}

extension KeyedDecodingContainer {
    /// A missing key is `nil`, as for a plain optional.
    func decode<Value>(_ type: ExplicitNull<Value>.Type, forKey key: Key) throws -> ExplicitNull<Value> {
        try decodeIfPresent(type, forKey: key) ?? ExplicitNull(wrappedValue: nil)
    }
}
