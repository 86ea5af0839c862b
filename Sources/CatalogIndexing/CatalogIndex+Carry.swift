import Core

/// What a change can alter in the answers kept between changes (`MemoCarry`), worked out from
/// the books' records before and after — called before the change is applied.
extension CatalogIndex {
    /// The carry for replacing `books` and dropping `removing`. Per book:
    /// - added or removed: every lexeme it has (or had), and browsing answers;
    /// - the same filters, sort keys (but perhaps its title key), schedule and rights: only the
    ///   words it gained or lost (a lexeme with the same fields on both sides changes no match,
    ///   no rank and no typo vocabulary) — nothing at all for a book whose indexed record is the
    ///   same (a cover, a video, a touch of `updated_at`); the pages showing it when its title,
    ///   author, language or translations changed (`MemoCarry.shown`: their highlights); the
    ///   browses in title order whose filters it meets and the searches in title order it may
    ///   match when its title key moved (`MemoCarry.titleOrder`);
    /// - only its rights windows' territory rules: its lexemes and browsing answers, for the
    ///   catalogs of the countries it comes into or leaves (`MemoCarry.territorial`) — unless a
    ///   country no rule names comes or goes too (every country: as below);
    /// - anything else (a filter, the creation time, the schedule or rights window changed): every
    ///   lexeme before and after, and browsing answers.
    public func carry(changing books: [CatalogBook], removing: [Int]) -> MemoCarry {
        var lexemes: [String] = [], browsing = false, footprints: [MemoCarry.Footprint] = [], shown = Set<Int>(), ordered: [String] = []
        var territorial: [String] = [], countries = Set<String>(), territorialFootprints: [MemoCarry.Footprint] = []
        // The books whose matches may change, one by one (`MemoCarry+Books.swift`): the lexemes
        // altered (nil: all), and each side's lexemes and filters (nil: not in the catalog).
        typealias Side = (lexemes: [String], footprint: MemoCarry.Footprint)
        var changed: [(altered: [String]?, before: Side?, after: Side?)] = []
        for id in removing where active.contains(id) {
            let old = self.lexemes(of: id)
            lexemes += old
            browsing = true
            footprints.append(footprint(of: id))
            changed.append((nil, (old, footprint(of: id)), nil))
        }
        for book in books {
            let fresh = book.lexemes.map { (text: $0.0, weights: $0.1 & 7) }
            guard active.contains(book.id) else {
                lexemes += fresh.map(\.text)
                browsing = true
                footprints.append(Self.footprint(of: book))
                changed.append((nil, nil, (fresh.map(\.text), Self.footprint(of: book))))
                continue
            }
            let old = bookLexemes[book.id].map { (text: lexemeText($0 >> 3), weights: UInt8($0 & 7)) }
            let sameFilters = self.sameFilters(book)
            if !sameFilters, self.sameFilters(book, rights: false), sameShown(book),
               let affected = countriesLicensingDifferently(book),
               Set(old.map { "\($0.weights)\u{1}\($0.text)" }) == Set(fresh.map { "\($0.weights)\u{1}\($0.text)" }) {
                // Only its territory rules changed: only the catalogs of the countries it comes
                // into or leaves (none: nothing at all).
                if !affected.isEmpty { territorial += old.map(\.text); territorialFootprints.append(footprint(of: book.id)) }
                countries.formUnion(affected)
            } else if sameFilters || self.sameFilters(book, titleKey: false) {
                // Only the (lexeme, fields) pairs on one side: the words the change added or
                // removed (an answer reads a book through those and its filters alone; relevance
                // ties go by id, not title).
                let before = Set(old.map { "\($0.weights)\u{1}\($0.text)" }), after = Set(fresh.map { "\($0.weights)\u{1}\($0.text)" })
                let altered = old.filter { !after.contains("\($0.weights)\u{1}\($0.text)") }.map(\.text)
                    + fresh.filter { !before.contains("\($0.weights)\u{1}\($0.text)") }.map(\.text)
                lexemes += altered
                if !altered.isEmpty {
                    changed.append((altered, (old.map(\.text), footprint(of: book.id)), (fresh.map(\.text), Self.footprint(of: book))))
                }
                // What a page's highlights show of it (title, author, language, translations).
                if !sameShown(book) { shown.insert(book.id) }
                if !sameFilters {
                    // Only its title key moved: its place in the title order, no count — in the
                    // browses whose filters it meets, and the searches in title order it matches.
                    browsing = true
                    footprints += [footprint(of: book.id, orderOnly: true), Self.footprint(of: book, orderOnly: true)]
                    ordered += old.map(\.text) + fresh.map(\.text)
                }
            } else {
                lexemes += old.map(\.text) + fresh.map(\.text)
                browsing = true
                footprints += [footprint(of: book.id), Self.footprint(of: book)]
                changed.append((nil, (old.map(\.text), footprint(of: book.id)), (fresh.map(\.text), Self.footprint(of: book))))
            }
        }
        let oneByOne = changed.count <= MemoCarry.booksCheckedOneByOne
        return MemoCarry(lexemes: lexemes, browsing: browsing, footprints: footprints, shown: shown,
                         territorial: countries.isEmpty ? nil : (countries, MemoCarry(lexemes: territorial, browsing: true, footprints: territorialFootprints)),
                         titleOrder: ordered.isEmpty ? nil : MemoCarry(lexemes: ordered, browsing: false),
                         countedBefore: browsing || !countries.isEmpty ? countedBefore(books.map(\.id) + removing) : nil,
                         vocabulary: oneByOne ? vocabularyChanging(lexemes, changing: books, removing: removing) : nil,
                         changed: oneByOne ? changed.map { book in
                             MemoCarry.ChangedBook(altered: book.altered, before: book.before.map { MemoCarry.Side(lexemes: $0.lexemes, footprint: $0.footprint) },
                                                   after: book.after.map { MemoCarry.Side(lexemes: $0.lexemes, footprint: $0.footprint) })
                         } : nil)
    }

    /// Of `lexemes` (the change's), those that may come into or leave the catalog — the lexemes
    /// an active book holds, or its typo vocabulary (`typoUses`: in a title or an author) — and
    /// with them change a search's expansion. One an unchanged active book holds (in a title or
    /// author) stays; so does one the changed books hold (so) both before and after, or neither.
    func vocabularyChanging(_ lexemes: [String], changing books: [CatalogBook], removing: [Int]) -> [String] {
        // What the changed books hold before the change: per lexeme, in any field and in a title or author.
        var held: [UInt32: (any: Int, typo: Int)] = [:]
        for id in removing + books.map(\.id) where active.contains(id) {
            for entry in bookLexemes[id] {
                held[entry >> 3, default: (0, 0)].any += 1
                if entry & 3 != 0 { held[entry >> 3]!.typo += 1 }
            }
        }
        let after = Set(books.flatMap { $0.lexemes.map(\.0) }), typoAfter = Set(books.flatMap { $0.lexemes.filter { $0.1 & 3 != 0 }.map(\.0) })
        return Set(lexemes).filter { text in
            // (Its bytes, not only the text: a word in another Unicode normalization form is the
            // same lexeme but another typo term — found by an outside review.)
            guard let id = lexemeID(text), lexemeBytes[Int(id)].elementsEqual(text.utf8) else { return true }
            let mine = held[id] ?? (0, 0)
            let stays = self.lexemes[Int(id)].count > mine.any || (mine.any > 0) == after.contains(text)
            let staysTypo = typoUses[Int(id)] > mine.typo || (mine.typo > 0) == typoAfter.contains(text)
            return !(stays && staysTypo)
        }
    }

    /// The filters an indexed book has now (`MemoCarry.Footprint`): its categories exact when
    /// every category id the index has seen fits in the 32 bits it keeps a book's in.
    func footprint(of id: Int, orderOnly: Bool = false) -> MemoCarry.Footprint {
        var footprint = MemoCarry.Footprint(publisher: publisher[id] == -1 ? .unknown : .id(publisher[id]), ageMin: Int(ageMin[id]), ageMax: Int(ageMax[id]),
                                            categories: bookCategories[id].map(Int.init))
        footprint.orderOnly = orderOnly
        footprint.exactCategories = byCategory.keys.allSatisfy { Int32(exactly: $0) != nil }
        return footprint
    }

    /// The filters `book` will have.
    static func footprint(of book: CatalogBook, orderOnly: Bool = false) -> MemoCarry.Footprint {
        var footprint = MemoCarry.Footprint(publisher: book.publisherID, ageMin: book.ageMin, ageMax: book.ageMax, categories: book.categoryIDs)
        footprint.orderOnly = orderOnly
        footprint.exactCategories = book.categoryIDs.allSatisfy { Int32(exactly: $0) != nil }
        return footprint
    }

    /// What a browsing answer to `parameters` in `scope` (the one narrowing it; nil: the whole
    /// catalog) reads of a book (`MemoCarry.affectsBrowse`): its category resolved as the answer
    /// resolves it; of the scope, its oldest age and blocked categories; whether it is in title
    /// order (a browse is in title or newest order: `CatalogParameters`; a search's relevance is not).
    public func browseFilters(_ parameters: CatalogParameters, scope: CatalogScope? = nil) -> MemoCarry.BrowseFilters {
        let category = parameters.category.map { slug in slug.unicodeScalars.contains("\u{0}") ? -1 : categoryID(for: slug) ?? -1 }
        return MemoCarry.BrowseFilters(publisher: parameters.publisher, age: parameters.age, category: category, titleOrder: parameters.sort == .title,
                                       maxAge: scope?.maxAge, blockedCategories: scope?.blockedCategories ?? [])
    }

    /// The countries whose catalog has `book` before and not after its change, or after and not
    /// before — those its territory rules name (a country no rule names is licensed by a window
    /// for every territory); nil when the unnamed ones change too (a first window for every
    /// territory, or the last one gone: every country's catalog).
    func countriesLicensingDifferently(_ book: CatalogBook) -> Set<String>? {
        let kept = rights[book.id]
        let before = stride(from: kept.startIndex + 2, to: kept.endIndex, by: 3).map { territoryRules[Int(kept[$0])] }
        let after = book.rights.map(\.rule)
        // A book without windows is in every country's catalog (`unlicensed(in:)`).
        func licensed(_ rules: [TerritoryRule], in country: String) -> Bool { rules.isEmpty || rules.contains { $0.applies(to: country) } }
        // "": a country no rule names (no code is empty).
        guard licensed(before, in: "") == licensed(after, in: "") else { return nil }
        let named = Set((before + after).flatMap { $0.territories + $0.excluded })
        return named.filter { licensed(before, in: $0) != licensed(after, in: $0) }
    }

    /// Whether `book` has the indexed book's filters and sort keys: ages, creation, publisher,
    /// title key (unless `titleKey` is false), categories, its rights windows' territory rules
    /// (unless `rights` is false) and schedule.
    func sameFilters(_ book: CatalogBook, rights compareRights: Bool = true, titleKey compareTitleKey: Bool = true) -> Bool {
        let id = book.id
        guard ageMin[id] == UInt8(clamping: book.ageMin), ageMax[id] == UInt8(clamping: book.ageMax), createdAt[id] == book.createdAt,
              publisher[id] == (book.publisherID.map { Int32(truncatingIfNeeded: $0) } ?? -1),
              !compareTitleKey || titleKeys[id].elementsEqual(book.titleKey),
              // As sets: the loader lists a book's categories and windows in no fixed order.
              bookCategories[id].sorted() == book.categoryIDs.map({ Int32(truncatingIfNeeded: $0) }).sorted(),
              // The same ids, not ones that read back the same in 32 bits (2³² apart).
              book.publisherID.map({ byPublisher[$0]?.contains(id) ?? false })
                ?? !byPublisher.contains(where: { Int32(truncatingIfNeeded: $0.key) == -1 && $0.value.contains(id) }),
              book.categoryIDs.allSatisfy({ byCategory[$0]?.contains(id) ?? false }) else { return false }
        if compareRights && !sameRules(book) { return false }
        let scheduled = book.liveFrom != nil || book.liveUntil != nil
        guard let live = schedule[id] else { return !scheduled }
        return scheduled && live.from == (book.liveFrom ?? Int64.min) && live.until == (book.liveUntil ?? Int64.max)
    }

    /// Whether `book`'s rights windows have the indexed book's territory rules. Only these reach an
    /// answer (a country's catalog); the windows' times are rendered per request
    /// (`rights_available`), so an end date moved changes no answer.
    func sameRules(_ book: CatalogBook) -> Bool {
        var rules: [Int64] = []
        for window in book.rights {
            guard let rule = ruleNumbers[window.rule] else { return false }   // a rule not in use yet: a change
            rules.append(Int64(rule))
        }
        let kept = rights[book.id]
        return stride(from: kept.startIndex + 2, to: kept.endIndex, by: 3).map({ kept[$0] }).sorted() == rules.sorted()
    }

    /// Whether `book` shows what the indexed book shows in a search's meta: its title, author
    /// and language (highlights) and its translations.
    func sameShown(_ book: CatalogBook) -> Bool {
        let shown = displayFields(book.id), bytes = book.json[...]
        func value(_ needle: ByteSearch.Needle) -> String { Self.stringValue(needle: needle, in: bytes) ?? "" }
        guard shown.title == value(Self.titleNeedle), shown.author == value(Self.authorNeedle), shown.language == value(Self.languageNeedle) else { return false }
        var translated: [String: [UInt8]] = [:]
        for translation in book.translations where translation.locale != book.language && (translation.title != nil || translation.description != nil) {
            translated[translation.locale] = (translation.title ?? Self.null) + (translation.description ?? Self.null)
        }
        for (locale, arena) in localized where !arena[book.id].elementsEqual(translated[locale] ?? []) { return false }
        return translated.keys.allSatisfy { localized[$0] != nil }
    }
}
