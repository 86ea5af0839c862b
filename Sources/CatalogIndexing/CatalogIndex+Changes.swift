import Core

/// Changing the index: a bulk load, and books added, changed and removed one by one or as a batch.
extension CatalogIndex {
    /// Starts a bulk load: books arrive in increasing id order into an empty index, and lists are
    /// sorted once at the end.
    public mutating func beginBulk() { bulk = true }

    public mutating func endBulk() {
        bulk = false
        var order = titleOrder
        titleOrder = []
        order.sort { lessTitle(Int($0), Int($1)) }
        titleOrder = order
        order = newestOrder
        newestOrder = []
        order.sort { lessNewest(Int($0), Int($1)) }
        newestOrder = order
        let capacity = active.capacity
        for i in lexemes.indices { lexemes[i].finish(capacity: capacity) }
        sortLexemes()
        typos.insertAll(typoUses.indices.filter { typoUses[$0] > 0 }.map { lexemeText(UInt32($0)) })
        buildFacets()
    }

    /// Adds a book during a bulk load.
    public mutating func upsert(_ book: CatalogBook) {
        if !bulk {
            apply([book], removing: [])
            return
        }
        attach(book, append: true)
        titleOrder.append(Int32(book.id))
        newestOrder.append(Int32(book.id))
    }

    /// Removes a book (no longer active, or deleted); unknown ids are ignored.
    public mutating func remove(_ id: Int) { apply([], removing: [id]) }

    /// Replaces `books` (added or changed) and drops `removing` (no longer active), as one change.
    public mutating func apply(_ books: [CatalogBook], removing: [Int]) {
        let changed = Set(books.map(\.id) + removing).filter { active.contains($0) }
        if changed.count + books.count <= Self.batchThreshold {
            for id in changed {
                removeFromOrders(id)
                detach(id, deferred: false)
            }
            for book in books {
                attach(book, append: false)
                insertIntoOrders(book.id)
            }
            return
        }
        // Batch: detach all, filter lists once, attach all, sort and merge once.
        var removed = Bitset(capacity: active.capacity)
        for id in changed { removed.insert(id) }
        titleOrder.removeAll { removed.contains(Int($0)) }
        newestOrder.removeAll { removed.contains(Int($0)) }
        var touched = Set<Int>()
        for id in changed {
            for entry in bookLexemes[id] { touched.insert(Int(entry >> 3)) }
            detach(id, deferred: true)
        }
        for lexeme in touched { lexemes[lexeme].filter(removed: removed) }
        for book in books {
            for id in attach(book, append: true) { touched.insert(id) }
        }
        let capacity = active.capacity
        for lexeme in touched { lexemes[lexeme].finish(capacity: capacity) }
        let added = books.map { Int32($0.id) }
        titleOrder = merge(titleOrder, added.sorted { lessTitle(Int($0), Int($1)) }, by: lessTitle)
        newestOrder = merge(newestOrder, added.sorted { lessNewest(Int($0), Int($1)) }, by: lessNewest)
    }

    /// Stores a book and adds it to every set and lexeme (not to the orders); returns its lexeme ids.
    @discardableResult
    mutating func attach(_ book: CatalogBook, append: Bool) -> [Int] {
        let id = book.id
        growPerBook(to: id)
        var entries: [UInt32] = []
        entries.reserveCapacity(book.lexemes.count)
        var ids: [Int] = []
        ids.reserveCapacity(book.lexemes.count)
        for (text, weights) in book.lexemes {
            let lexeme = intern(text)
            entries.append(lexeme << 3 | UInt32(weights & 7))
            ids.append(Int(lexeme))
            lexemes[Int(lexeme)].add(id, weights: weights, append: append)
            if weights & 3 != 0 {
                typoUses[Int(lexeme)] += 1
                if typoUses[Int(lexeme)] == 1 && !bulk { typos.insert(text) }
            }
        }
        if !append {
            let capacity = active.capacity
            for lexeme in ids { lexemes[lexeme].finish(capacity: capacity) }
        }
        bookLexemes.set(id, entries)
        json.set(id, book.json)
        titleKeys.set(id, book.titleKey)
        bookCategories.set(id, book.categoryIDs.map { Int32(truncatingIfNeeded: $0) })
        rights.set(id, book.rights.flatMap { [$0.start, $0.end ?? Int64.max, Int64(ruleNumber(for: $0.rule))] })
        for window in book.rights {
            let number = ruleNumber(for: window.rule)
            byRule[number].insert(id)
            ruleWindows[number] += 1
        }
        if !book.rights.isEmpty { windowed.insert(id) }
        if book.liveFrom != nil || book.liveUntil != nil {
            schedule[id] = (book.liveFrom ?? Int64.min, book.liveUntil ?? Int64.max)
            scheduleChanges += 1
        }
        rightsOffset[id] = UInt32(book.rightsOffset)
        attachTranslations(book)
        ageMin[id] = UInt8(clamping: book.ageMin)
        ageMax[id] = UInt8(clamping: book.ageMax)
        createdAt[id] = book.createdAt
        publisher[id] = book.publisherID.map { Int32(truncatingIfNeeded: $0) } ?? -1
        active.insert(id)
        count += 1
        for age in 0...18 where book.ageMin <= age && age <= book.ageMax { byAge[age].insert(id) }
        for category in book.categoryIDs { byCategory[category, default: Bitset()].insert(id) }
        if !bulk { facets.insert(id, bands: Self.ageBands.map(\.age), from: book.ageMin, to: book.ageMax, categories: book.categoryIDs) }
        if let publisher = book.publisherID { byPublisher[publisher, default: Bitset()].insert(id) }
        return ids
    }

    /// Removes `id` from the set its stored 32-bit id names: that id's when it holds the book,
    /// else every id that reads back as it (an id past 2³¹ is stored truncated; -1 is also none).
    /// (Found by an outside review: a book moved off such a publisher or category stayed in its set.)
    static func remove(_ id: Int, stored: Int32, from sets: inout [Int: Bitset]) {
        if stored >= 0, sets[Int(stored)]?.contains(id) == true { sets[Int(stored)]!.remove(id); return }
        for key in sets.keys where Int32(truncatingIfNeeded: key) == stored { sets[key]!.remove(id) }
    }

    /// Takes a book out of every set and lexeme and frees its stored values (not the orders).
    mutating func detach(_ id: Int, deferred: Bool) {
        for entry in bookLexemes[id] {
            let lexeme = Int(entry >> 3)
            lexemes[lexeme].remove(id, deferred: deferred)
            if entry & 3 != 0 {
                typoUses[lexeme] -= 1
                if typoUses[lexeme] == 0 { typos.remove(lexemeText(entry >> 3)) }
            }
        }
        for age in Int(ageMin[id])...max(Int(ageMin[id]), Int(ageMax[id])) where age <= 18 { byAge[age].remove(id) }
        for category in bookCategories[id] { Self.remove(id, stored: category, from: &byCategory) }
        facets.remove(id)
        Self.remove(id, stored: publisher[id], from: &byPublisher)
        let windows = rights[id]
        for i in stride(from: windows.startIndex + 2, to: windows.endIndex, by: 3) {
            byRule[Int(windows[i])].remove(id)
            ruleWindows[Int(windows[i])] -= 1
        }
        windowed.remove(id)
        if schedule.removeValue(forKey: id) != nil { scheduleChanges += 1 }
        active.remove(id)
        count -= 1
        bookLexemes.clear(id); json.clear(id); titleKeys.clear(id); bookCategories.clear(id); rights.clear(id)
        for locale in localized.keys { localized[locale]!.clear(id) }
    }

    mutating func growPerBook(to id: Int) {
        guard id >= ageMin.count else { return }
        let extra = id + 1 - ageMin.count
        ageMin.append(contentsOf: repeatElement(0, count: extra))
        ageMax.append(contentsOf: repeatElement(0, count: extra))
        createdAt.append(contentsOf: repeatElement(0, count: extra))
        publisher.append(contentsOf: repeatElement(-1, count: extra))
        rightsOffset.append(contentsOf: repeatElement(0, count: extra))
        descriptionStart.append(contentsOf: repeatElement(0, count: extra))
        descriptionLength.append(contentsOf: repeatElement(0, count: extra))
    }

    mutating func ruleNumber(for rule: TerritoryRule) -> Int {
        if let number = ruleNumbers[rule] { return number }
        territoryRules.append(rule)
        byRule.append(Bitset())
        ruleWindows.append(0)
        ruleNumbers[rule] = territoryRules.count - 1
        return territoryRules.count - 1
    }

    mutating func intern(_ text: String) -> UInt32 {
        if let id = lexemeIDs[text] { return id }
        let id = UInt32(lexemeBytes.count)
        lexemeIDs[text] = id
        lexemeBytes.append(Array(text.utf8))
        lexemes.append(LexemeBooks())
        typoUses.append(0)
        if !bulk {
            let bytes = lexemeBytes[Int(id)]
            var a = 0, b = sortedLexemes.count
            while a < b {
                let m = (a + b) / 2
                if lexemeBytes[Int(sortedLexemes[m])].lexicographicallyPrecedes(bytes) { a = m + 1 } else { b = m }
            }
            sortedLexemes.insert(id, at: a)
        }
        return id
    }

    mutating func sortLexemes() {
        let bytes = lexemeBytes
        sortedLexemes = Array(0..<UInt32(bytes.count)).sorted { bytes[Int($0)].lexicographicallyPrecedes(bytes[Int($1)]) }
    }

    func lexemeID(_ text: String) -> UInt32? { lexemeIDs[text] }

    /// The lexemes of an indexed book (empty for an unknown id).
    public func lexemes(of id: Int) -> [String] { bookLexemes[id].map { lexemeText($0 >> 3) } }
    func lexemeText(_ id: UInt32) -> String { String(decoding: lexemeBytes[Int(id)], as: UTF8.self) }
}
