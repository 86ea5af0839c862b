import CatalogIndexing
import Core
import NIOCore

/// PostgreSQL's binary wire formats for the three column types the engine's build reads raw, so
/// the database sends stored values as they are instead of computing text or numerics per row
/// (a million books: `ts_filter` ×3, `extract(epoch …)` and per-row rights subqueries cost PostgreSQL
/// 7 of its 13.6 seconds).
enum PostgresBinary {
    /// Microseconds between 1970-01-01 and PostgreSQL's epoch, 2000-01-01 (both UTC).
    static let epochOffset: Int64 = 946_684_800_000_000

    /// A `timestamptz` as microseconds since 1970 (±infinity stay `Int64.max`/`.min`).
    static func microseconds(_ buffer: ByteBuffer) -> Int64? {
        var buffer = buffer
        guard let raw = buffer.readInteger(as: Int64.self) else { return nil }
        return raw == .max || raw == .min ? raw : raw + epochOffset
    }

    /// A one-dimensional `timestamptz[]` (NULL array: empty), each element as `microseconds`.
    static func microsecondsArray(_ buffer: ByteBuffer?) -> [Int64?] {
        guard var buffer, let dimensions = buffer.readInteger(as: Int32.self), dimensions == 1,
              buffer.readInteger(as: Int32.self) != nil, buffer.readInteger(as: UInt32.self) != nil,
              let count = buffer.readInteger(as: Int32.self), buffer.readInteger(as: Int32.self) != nil
        else { return [] }
        var result: [Int64?] = []
        result.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let length = buffer.readInteger(as: Int32.self) else { break }
            if length < 0 { result.append(nil); continue }
            guard let element = buffer.readSlice(length: Int(length)) else { break }
            result.append(microseconds(element))
        }
        return result
    }

    /// A `tsvector`'s lexemes with the fields they occur in: weight A → title, B → author,
    /// C → description (`ts_filter`'s rule; a lexeme without positions, or only at weight D,
    /// is in no field and left out).
    static func lexemes(_ buffer: ByteBuffer) -> [(String, UInt8)] {
        var buffer = buffer
        guard let count = buffer.readInteger(as: Int32.self), count > 0 else { return [] }
        var result: [(String, UInt8)] = []
        result.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let end = buffer.readableBytesView.firstIndex(of: 0) else { break }
            let length = end - buffer.readerIndex
            guard let lexeme = buffer.readString(length: length), buffer.readInteger(as: UInt8.self) != nil,
                  let positions = buffer.readInteger(as: UInt16.self) else { break }
            var fields: UInt8 = 0
            for _ in 0..<positions {
                guard let position = buffer.readInteger(as: UInt16.self) else { break }
                switch position >> 14 {
                case 3: fields |= CatalogBook.title
                case 2: fields |= CatalogBook.author
                case 1: fields |= CatalogBook.description
                default: break
                }
            }
            if fields != 0 { result.append((lexeme, fields)) }
        }
        return result
    }
}
