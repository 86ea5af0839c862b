/// `--name value` options of the command line, repeatable where the command allows it.
public struct CommandArguments: Equatable, Sendable {
    public private(set) var values: [String: [String]] = [:]
    public private(set) var flags: Set<String> = []

    public struct UsageError: Error, Equatable, CustomStringConvertible {
        public let description: String
        public init(_ description: String) { self.description = description }
    }

    /// Parses `arguments` accepting the `options` (which take a value) and `flags` (which do not).
    public init(_ arguments: [String], options: Set<String>, flags allowedFlags: Set<String> = []) throws {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw UsageError("unexpected argument '\(argument)'")
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if allowedFlags.contains(name), inlineValue == nil {
                flags.insert(name)
                index += 1
                continue
            }
            guard options.contains(name) else { throw UsageError("unknown option '--\(name)'") }
            if let inlineValue {
                values[name, default: []].append(inlineValue)
                index += 1
            } else {
                guard index + 1 < arguments.count, !arguments[index + 1].hasPrefix("--") else {
                    throw UsageError("option '--\(name)' needs a value")
                }
                values[name, default: []].append(arguments[index + 1])
                index += 2
            }
        }
    }

    /// The single value of `name`; an error when given more than once.
    public func single(_ name: String) throws -> String? {
        guard let list = values[name] else { return nil }
        guard list.count == 1 else { throw UsageError("option '--\(name)' given more than once") }
        return list[0]
    }

    public func required(_ name: String) throws -> String {
        guard let value = try single(name), !value.isEmpty else { throw UsageError("missing required option '--\(name)'") }
        return value
    }

    public func all(_ name: String) -> [String] { values[name] ?? [] }
}
