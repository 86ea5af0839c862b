/// One bad query parameter or body field, with a message a developer can act on.
public struct ParameterError: Error, Equatable, Sendable {
    public let field: String
    public let message: String
    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }
}
