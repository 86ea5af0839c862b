import Core

/// The index as a snapshot (`SnapshotWriter`): every array as its raw bytes, so loading a million
/// books is copying memory, not indexing them again. Dictionaries derived from arrays (lexeme
/// ids by text, rule numbers, category slugs) are rebuilt on load rather than stored.
extension CatalogIndex {
    /// Bump when the index's stored layout changes: an older snapshot is then refused.
    public static let snapshotFormat = 6

    public func encode(to writer: SnapshotWriter) throws {
        precondition(!bulk, "a bulk load in progress is not a snapshot")
        try writer.int(count)
        try active.encode(to: writer)
        try writer.array(ageMin); try writer.array(ageMax); try writer.array(createdAt)
        try writer.array(publisher); try writer.array(rightsOffset)
        try json.encode(to: writer); try titleKeys.encode(to: writer); try bookLexemes.encode(to: writer)
        try bookCategories.encode(to: writer); try rights.encode(to: writer)
        for set in byAge { try set.encode(to: writer) }
        try Self.encode(byCategory, to: writer)
        try Self.encode(byPublisher, to: writer)
        try writer.array(titleOrder); try writer.array(newestOrder)
        try writer.int(territoryRules.count)
        for rule in territoryRules {
            try writer.string(rule.territories.joined(separator: " ")); try writer.string(rule.excluded.joined(separator: " "))
        }
        for set in byRule { try set.encode(to: writer) }
        try writer.array(ruleWindows)
        try windowed.encode(to: writer)
        let scheduled = schedule.keys.sorted()
        try writer.array(scheduled); try writer.array(scheduled.map { schedule[$0]!.from }); try writer.array(scheduled.map { schedule[$0]!.until })
        try writer.int(scheduleChanges)
        try writer.array(lexemeBytes.map { UInt32($0.count) }); try writer.array(lexemeBytes.flatMap { $0 })
        for books in lexemes { try books.encode(to: writer) }
        try writer.array(typoUses); try writer.array(sortedLexemes)
        try typos.encode(to: writer)
        try writer.array(categories.map(\.id))
        for category in categories { try writer.string(category.slug) }
        // Localized text (format 3): category names, then each locale's translated fields.
        for category in categories {
            let locales = category.names.keys.sorted()
            try writer.int(locales.count)
            for locale in locales { try writer.string(locale); try writer.array(category.names[locale]!) }
        }
        let locales = localized.keys.sorted()
        try writer.int(locales.count)
        for locale in locales { try writer.string(locale); try localized[locale]!.encode(to: writer) }
        try writer.array(descriptionStart); try writer.array(descriptionLength)
    }

    public init(snapshot reader: inout SnapshotReader) throws {
        self.init()
        func corrupt(_ what: String) -> SnapshotReader.Failure { .corrupt(what) }
        count = try reader.int()
        active = try Bitset(snapshot: &reader)
        ageMin = try reader.array(); ageMax = try reader.array(); createdAt = try reader.array()
        publisher = try reader.array(); rightsOffset = try reader.array()
        json = try Arena(snapshot: &reader); titleKeys = try Arena(snapshot: &reader); bookLexemes = try Arena(snapshot: &reader)
        bookCategories = try Arena(snapshot: &reader); rights = try Arena(snapshot: &reader)
        guard [ageMax.count, createdAt.count, publisher.count, rightsOffset.count].allSatisfy({ $0 == ageMin.count }),
              active.count == count else { throw corrupt("per-book arrays") }
        byAge = try (0..<byAge.count).map { _ in try Bitset(snapshot: &reader) }
        byCategory = try Self.decodeSets(&reader)
        byPublisher = try Self.decodeSets(&reader)
        titleOrder = try reader.array(); newestOrder = try reader.array()
        guard titleOrder.count == count, newestOrder.count == count else { throw corrupt("orders") }
        let rules = try reader.int()
        guard rules >= 1 && rules <= reader.remaining else { throw corrupt("territory rules") }
        territoryRules = try (0..<rules).map { _ in
            TerritoryRule(territories: try reader.string().split(separator: " ").map(String.init),
                          excluded: try reader.string().split(separator: " ").map(String.init))
        }
        ruleNumbers = Dictionary(territoryRules.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
        byRule = try (0..<rules).map { _ in try Bitset(snapshot: &reader) }
        ruleWindows = try reader.array()
        windowed = try Bitset(snapshot: &reader)
        let scheduled: [Int] = try reader.array(), from: [Int64] = try reader.array(), until: [Int64] = try reader.array()
        guard from.count == scheduled.count, until.count == scheduled.count, ruleWindows.count == rules else { throw corrupt("schedule") }
        schedule = Dictionary(uniqueKeysWithValues: scheduled.indices.map { (scheduled[$0], (from: from[$0], until: until[$0])) })
        scheduleChanges = try reader.int()
        let lengths: [UInt32] = try reader.array(), text: [UInt8] = try reader.array()
        guard lengths.reduce(0, { $0 + Int($1) }) == text.count else { throw corrupt("lexemes") }
        var start = 0
        lexemeBytes = lengths.map { length in
            defer { start += Int(length) }
            return Array(text[start..<start + Int(length)])
        }
        lexemeIDs = Dictionary(lexemeBytes.enumerated().map { (String(decoding: $1, as: UTF8.self), UInt32($0)) }, uniquingKeysWith: { a, _ in a })
        lexemes = try lexemeBytes.map { _ in try LexemeBooks(snapshot: &reader) }
        typoUses = try reader.array(); sortedLexemes = try reader.array()
        guard typoUses.count == lexemes.count, sortedLexemes.count == lexemes.count else { throw corrupt("lexeme tables") }
        typos = try TypoVocabulary(snapshot: &reader)
        let ids: [Int] = try reader.array()
        let slugs = try ids.map { _ in try reader.string() }
        setCategories(try zip(ids, slugs).map { id, slug in
            let count = try reader.int()
            guard count >= 0 && count <= reader.remaining else { throw corrupt("category names") }
            var names: [String: [UInt8]] = [:]
            for _ in 0..<count { names[try reader.string()] = try reader.array() }
            return Category(id: id, slug: slug, names: names)
        })
        let locales = try reader.int()
        guard locales >= 0 && locales <= reader.remaining else { throw corrupt("locales") }
        for _ in 0..<locales { localized[try reader.string()] = try Arena(snapshot: &reader) }
        descriptionStart = try reader.array(); descriptionLength = try reader.array()
        guard descriptionStart.count == ageMin.count, descriptionLength.count == ageMin.count else { throw corrupt("description offsets") }
    }

    /// The index's snapshot in memory (tests compare two indexes by it).
    public func snapshotBytes() throws -> [UInt8] {
        var bytes: [UInt8] = []
        let writer = SnapshotWriter { bytes.append(contentsOf: $0) }
        try encode(to: writer)
        try writer.finish()
        return bytes
    }

    private static func encode(_ sets: [Int: Bitset], to writer: SnapshotWriter) throws {
        let keys = sets.keys.sorted()
        try writer.array(keys)
        for key in keys { try sets[key]!.encode(to: writer) }
    }

    private static func decodeSets(_ reader: inout SnapshotReader) throws -> [Int: Bitset] {
        let keys: [Int] = try reader.array()
        var sets: [Int: Bitset] = [:]
        sets.reserveCapacity(keys.count)
        for key in keys { sets[key] = try Bitset(snapshot: &reader) }
        return sets
    }
}

extension CatalogIndex.Answer {
    /// An answer kept by the engine, in its snapshot (a restart starts with the popular answers).
    public func encode(to writer: SnapshotWriter) throws {
        try writer.int(total); try writer.array(ids)
        try writer.array(categoryCounts.map(\.id)); try writer.array(categoryCounts.map(\.count)); try writer.array(ageBandCounts)
    }

    public init(snapshot reader: inout SnapshotReader) throws {
        let total = try reader.int(), ids: [Int] = try reader.array()
        let categories: [Int] = try reader.array(), counts: [Int] = try reader.array()
        guard categories.count == counts.count else { throw SnapshotReader.Failure.corrupt("answer") }
        self.init(total: total, ids: ids, categoryCounts: zip(categories, counts).map { (id: $0, count: $1) }, ageBandCounts: try reader.array())
    }
}
