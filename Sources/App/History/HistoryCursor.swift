import Core
import Foundation
import SQLKit

/// The opaque `after` cursor of the history: the last listed play's moment (microseconds since
/// 1970, exact) and id. A page after it lists the plays before it, newest first — plays that
/// arrive meanwhile are newer and never shift the pages a client is walking.
struct HistoryCursor: Equatable {
    let microseconds: Int64
    let id: Int

    /// `after` from the query: nil when absent; the empty value starts from the newest play.
    static func parse(_ query: QueryParameters) throws -> HistoryCursor?? {
        guard query.contains("after") else { return nil }
        guard let text = try query.value("after") else { return .some(nil) }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard text.count <= 64, let data = Data(base64Encoded: base64), let plain = String(data: data, encoding: .utf8) else { throw invalid }
        let parts = plain.split(separator: ":")
        guard parts.count == 3, parts[0] == "p1", let us = Int64(parts[1]), let id = Int(parts[2]), id > 0 else { throw invalid }
        return .some(HistoryCursor(microseconds: us, id: id))
    }

    static let invalid = Problem.invalidParameter("after", "after must be a cursor from a Link header of this history")

    var text: String {
        Data("p1:\(microseconds):\(id)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Plays strictly before this one in the history's order.
    var condition: SQLQueryString {
        "(p.played_at, p.id) < (timestamptz 'epoch' + (\(bind: String(microseconds)) || ' microseconds')::interval, \(bind: id))"
    }
}
