import Core
/// One active book as the catalog index holds it: what filters, sorts and search need, and the
/// encoded book object with a hole where `rights_available` goes (it depends on the clock).
public struct CatalogBook: Sendable {
    public struct RightsWindow: Sendable, Equatable {
        /// Microseconds since 1970; `end` nil means open-ended.
        public let start: Int64
        public let end: Int64?
        /// Where the window applies.
        public let rule: TerritoryRule
        public init(start: Int64, end: Int64?, rule: TerritoryRule = .worldwide) { self.start = start; self.end = end; self.rule = rule }
        /// Available at `t`: starts_at ≤ t < ends_at (or no end), as the contract defines it.
        public func contains(_ t: Int64) -> Bool { start <= t && (end.map { t < $0 } ?? true) }
    }

    /// Weight bits of a lexeme: where in the book it occurs.
    public static let title: UInt8 = 1, author: UInt8 = 2, description: UInt8 = 4

    public var id: Int
    /// `lower(title)` as PostgreSQL computes it, compared byte by byte (the SQL orders by it
    /// `COLLATE "C"`), so both paths sort titles identically.
    public var titleKey: [UInt8]
    public var createdAt: Int64
    public var ageMin: Int
    public var ageMax: Int
    public var publisherID: Int?
    public var categoryIDs: [Int]
    /// Lexemes of `search_vector` (PostgreSQL's own tokenization) with their weight bits.
    public var lexemes: [(String, UInt8)]
    /// The book object's JSON with `rights_available`'s value left out at `rightsOffset`.
    public var json: [UInt8]
    public var rightsOffset: Int
    public var rights: [RightsWindow]
    /// A translation of the title and description (docs/localization.md), each a JSON string
    /// literal as the book object shows it; nil where that field is not translated.
    public struct Translation: Sendable, Equatable {
        public let locale: String
        public let title: [UInt8]?
        public let description: [UInt8]?
        public init(locale: String, title: [UInt8]?, description: [UInt8]?) { self.locale = locale; self.title = title; self.description = description }
    }
    /// The book's own language (ISO 639-1): the base text's; a translation into it is not used.
    public var language = ""
    public var translations: [Translation] = []
    /// Where the description's JSON literal lies in `json` (the loader knows; found when nil), so a
    /// translated description is spliced in without scanning the object.
    public var descriptionRange: Range<Int>? = nil
    /// Scheduled publishing: in the catalog from `liveFrom` until `liveUntil` (microseconds; nil: no bound).
    public var liveFrom: Int64?
    public var liveUntil: Int64?

    public init(id: Int, titleKey: [UInt8], createdAt: Int64, ageMin: Int, ageMax: Int, publisherID: Int?, categoryIDs: [Int],
                lexemes: [(String, UInt8)], json: [UInt8], rightsOffset: Int, rights: [RightsWindow], liveFrom: Int64? = nil, liveUntil: Int64? = nil) {
        self.liveFrom = liveFrom; self.liveUntil = liveUntil
        self.id = id; self.titleKey = titleKey; self.createdAt = createdAt; self.ageMin = ageMin; self.ageMax = ageMax
        self.publisherID = publisherID; self.categoryIDs = categoryIDs; self.lexemes = lexemes; self.json = json
        self.rightsOffset = rightsOffset; self.rights = rights
    }
}
