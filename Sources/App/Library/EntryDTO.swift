import SQLKit
import Vapor

extension LibraryController {
    /// A library entry: the book object plus when it was added and played, progress, rights end and
    /// whether a playback grant would be given for the book (`Playability`). Its rows are
    /// `LibraryQueries.entryColumns(country:)`.
    struct EntryDTO: Content {
        let book: BookDTO
        let addedAt: Date
        let lastPlayedAt: Date?
        let progress: Double?
        let completedCount: Int
        let rightsEndsAt: Date?
        let playable: Playability

        // The entry is the book object plus the entry's fields, flattened.
        func encode(to encoder: any Encoder) throws {
            try book.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(addedAt, forKey: .addedAt)
            try container.encode(lastPlayedAt, forKey: .lastPlayedAt)
            try container.encode(progress, forKey: .progress)
            try container.encode(completedCount, forKey: .completedCount)
            try container.encode(rightsEndsAt, forKey: .rightsEndsAt)
            try container.encode(playable, forKey: .playable)
        }
        init(from decoder: any Decoder) throws {
            book = try BookDTO(from: decoder)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            addedAt = try container.decode(Date.self, forKey: .addedAt)
            lastPlayedAt = try container.decodeIfPresent(Date.self, forKey: .lastPlayedAt)
            progress = try container.decodeIfPresent(Double.self, forKey: .progress)
            completedCount = try container.decode(Int.self, forKey: .completedCount)
            rightsEndsAt = try container.decodeIfPresent(Date.self, forKey: .rightsEndsAt)
            playable = try container.decode(Playability.self, forKey: .playable)
        }
        enum CodingKeys: String, CodingKey { case addedAt, lastPlayedAt, progress, completedCount, rightsEndsAt, playable }
        init(row: any SQLRow) throws {
            book = try BookDTO(row: row)
            let entry = try row.decode(model: LibraryQueries.EntryRow.self, keyDecodingStrategy: .convertFromSnakeCase)
            addedAt = entry.addedAt
            lastPlayedAt = entry.lastPlayedAt
            progress = entry.progress
            completedCount = entry.completedCount
            rightsEndsAt = entry.rightsEndsAt
            playable = Playability(try row.decode(model: Playability.Row.self, keyDecodingStrategy: .convertFromSnakeCase))
        }
    }
}
