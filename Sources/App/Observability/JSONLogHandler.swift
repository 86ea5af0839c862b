import Foundation
import Logging

/// Logs as one JSON object per line on standard output (`LOG_FORMAT=json`, the default under
/// `--env production`): `ts`, `level`, `label`, `message`, then the metadata's keys. `ts` is read
/// from `clock`, one taken at bootstrap, before any application (and its clock) exists.
struct JSONLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    let clock: AppClock

    init(label: String, level: Logger.Level, clock: AppClock) {
        self.label = label
        self.logLevel = level
        self.clock = clock
    }

    /// The factory for `LoggingSystem.bootstrap`: every handler reads the one `clock`.
    static func factory(clock: AppClock) -> @Sendable (Logger.Level) -> (@Sendable (String) -> any LogHandler) {
        { level in { label in JSONLogHandler(label: label, level: level, clock: clock) } }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        FileHandle.standardOutput.write(Data(Self.line(level: event.level, label: label, message: event.message.description,
                                                       metadata: metadata.merging(event.metadata ?? [:]) { $1 }, at: clock.now()).utf8))
    }

    /// The line for one entry (sorted metadata keys, so lines are stable), newline included.
    static func line(level: Logger.Level, label: String, message: String, metadata: Logger.Metadata, at date: Date) -> String {
        var fields: [(String, String)] = [("ts", quoted(date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true)))),
                                          ("level", quoted(level.rawValue)), ("label", quoted(label)), ("message", quoted(message))]
        for key in metadata.keys.sorted() where !["ts", "level", "label", "message"].contains(key) {
            fields.append((key, value(metadata[key]!)))
        }
        return "{" + fields.map { quoted($0.0) + ":" + $0.1 }.joined(separator: ",") + "}\n"
    }

    private static func value(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let text): return quoted(text)
        case .stringConvertible(let item): return quoted(item.description)
        case .array(let items): return "[" + items.map(Self.value).joined(separator: ",") + "]"
        case .dictionary(let pairs): return "{" + pairs.keys.sorted().map { quoted($0) + ":" + Self.value(pairs[$0]!) }.joined(separator: ",") + "}"
        }
    }

    /// A JSON string literal.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x2028 || scalar.value == 0x2029:
                out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
