import Core
/// The catalog in the family's language (docs/localization.md). A book's stored JSON holds its
/// own text; per locale only its translated title and description are kept (as JSON literals),
/// and category names per locale with the categories. A book is rendered in a locale chain by
/// splicing: the first translation along the chain of each field, else the stored text.
extension CatalogIndex {
    static let null = Array("null".utf8)

    /// Keeps `book`'s translations (a translation into its own language is not used).
    mutating func attachTranslations(_ book: CatalogBook) {
        let bytes = book.json[...]
        // Found when the loader did not say (0..<0: no description key, nothing spliced there).
        let description = book.descriptionRange ?? {
            let key = Self.find(Self.descriptionKey, in: bytes, from: bytes.startIndex)
            guard key < bytes.endIndex else { return 0..<0 }
            let start = key + Self.descriptionKey.count
            return start..<Self.literalEnd(bytes, from: start)
        }()
        descriptionStart[book.id] = UInt32(description.lowerBound)
        descriptionLength[book.id] = UInt32(description.count)
        for translation in book.translations where translation.locale != book.language && (translation.title != nil || translation.description != nil) {
            localized[translation.locale, default: Arena()].set(book.id, (translation.title ?? Self.null) + (translation.description ?? Self.null))
        }
    }

    /// The translated title and description literals of `id` along `locales` (nil: the book's own).
    func translatedFields(_ id: Int, _ locales: [String]) -> (title: ArraySlice<UInt8>?, description: ArraySlice<UInt8>?) {
        var title: ArraySlice<UInt8>?, description: ArraySlice<UInt8>?
        for locale in locales {
            guard let arena = localized[locale] else { continue }
            let bytes = arena[id]
            guard !bytes.isEmpty else { continue }
            let split = Self.literalEnd(bytes, from: bytes.startIndex)
            if title == nil, bytes[bytes.startIndex] == UInt8(ascii: "\"") { title = bytes[bytes.startIndex..<split] }
            if description == nil, split < bytes.endIndex, bytes[split] == UInt8(ascii: "\"") { description = bytes[split...] }
            if title != nil && description != nil { break }
        }
        return (title, description)
    }

    /// Category names along `locales` (as JSON literals), by category id; empty when none is translated.
    public func categoryNames(_ locales: [String]) -> [Int: [UInt8]] {
        guard !locales.isEmpty else { return [:] }
        var names: [Int: [UInt8]] = [:]
        for category in categories {
            if let name = locales.lazy.compactMap({ category.names[$0] }).first { names[category.id] = name }
        }
        return names
    }

    /// The end of the JSON literal at `from` (a string: past its closing quote; else `null`).
    static func literalEnd(_ bytes: ArraySlice<UInt8>, from: Int) -> Int {
        guard from < bytes.endIndex, bytes[from] == UInt8(ascii: "\"") else { return min(from + 4, bytes.endIndex) }
        var i = from + 1
        while i < bytes.endIndex {
            if bytes[i] == UInt8(ascii: "\\") { i += 2; continue }
            if bytes[i] == UInt8(ascii: "\"") { return i + 1 }
            i += 1
        }
        return bytes.endIndex
    }

    /// The first index of `pattern` in `bytes` at or after `from` (endIndex when absent).
    static func find(_ pattern: [UInt8], in bytes: ArraySlice<UInt8>, from: Int) -> Int {
        guard let first = pattern.first, pattern.count <= bytes.endIndex - from else { return bytes.endIndex }
        var i = from
        let last = bytes.endIndex - pattern.count
        while i <= last {
            if bytes[i] == first && bytes[i..<i + pattern.count].elementsEqual(pattern) { return i }
            i += 1
        }
        return bytes.endIndex
    }

    static let categoriesKey = Array(",\"categories\":[".utf8), authorKey = Array("\"author\":".utf8)
    static let nameKey = Array("\"name\":".utf8), slugKey = Array(",\"slug\":".utf8), idKey = Array("{\"id\":".utf8)
    static let descriptionKey = Array(",\"description\":".utf8), durationKey = Array(",\"duration_seconds\":".utf8)
    static let titleKey = Array(",\"status\":\"active\",\"title\":".utf8)

    /// `id`'s object in `locales` (translated fields and category names spliced in), rights
    /// evaluated at `now` in `country`. `names`: `categoryNames(locales)`. Nothing is scanned but
    /// the categories array: the title sits after the rights hole and the description's place is
    /// kept per book.
    func render(_ id: Int, at now: Int64, in country: String?, locales: [String], names: [Int: [UInt8]], into out: inout [UInt8]) {
        let fields: (title: ArraySlice<UInt8>?, description: ArraySlice<UInt8>?) = locales.isEmpty ? (nil, nil) : translatedFields(id, locales)
        let hasNames = !names.isEmpty && bookCategories[id].contains { names[Int($0)] != nil }
        guard fields.title != nil || fields.description != nil || hasNames else { return render(id, at: now, in: country, into: &out) }
        let range = json.range(id)
        let split = range.lowerBound + Int(rightsOffset[id])
        json.storage.withUnsafeBufferPointer { all in
            var at = range.lowerBound
            if hasNames {
                // {"age_max":…,"age_min":…,"author":"…","categories":[{"id":N,"name":"…","slug":"…"},…],"cover":
                let author = Self.find(Self.authorKey, all, from: at, to: split) + Self.authorKey.count
                var i = Self.literalEnd(all, from: author, to: split) + Self.categoriesKey.count
                out.append(contentsOf: UnsafeBufferPointer(rebasing: all[at..<i]))
                at = i
                while i < split && all[i] != UInt8(ascii: "]") {
                    if all[i] == UInt8(ascii: ",") { i += 1 }
                    i += Self.idKey.count
                    var category = 0
                    while i < split, all[i] >= 48 && all[i] <= 57 { category = category * 10 + Int(all[i] - 48); i += 1 }
                    let name = i + Self.nameKey.count + 1   // ,"name":
                    let nameEnd = Self.literalEnd(all, from: name, to: split)
                    if let translated = names[category] {
                        out.append(contentsOf: UnsafeBufferPointer(rebasing: all[at..<name]))
                        out.append(contentsOf: translated)
                        at = nameEnd
                    }
                    i = Self.literalEnd(all, from: nameEnd + Self.slugKey.count, to: split) + 1   // ,"slug":"…"}
                }
            }
            if let description = fields.description, descriptionLength[id] > 0 {
                let start = range.lowerBound + Int(descriptionStart[id])
                out.append(contentsOf: UnsafeBufferPointer(rebasing: all[at..<start]))
                out.append(contentsOf: description)
                at = start + Int(descriptionLength[id])
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: all[at..<split]))
            out.append(contentsOf: rightsAvailable(id, at: now, in: country) ? "true".utf8 : "false".utf8)
            if let title = fields.title {
                out.append(contentsOf: Self.titleKey)
                out.append(contentsOf: title)
                out.append(UInt8(ascii: "}"))
            } else {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: all[split..<range.upperBound]))
            }
        }
    }

    /// The end of the JSON string literal at `from` in `bytes` (past its closing quote).
    static func literalEnd(_ bytes: UnsafeBufferPointer<UInt8>, from: Int, to end: Int) -> Int {
        var i = from + 1
        while i < end {
            let byte = bytes[i]
            if byte == UInt8(ascii: "\\") { i += 2; continue }
            if byte == UInt8(ascii: "\"") { return i + 1 }
            i += 1
        }
        return end
    }

    /// The first index of `pattern` in `bytes[from..<end]` (`end` when absent).
    static func find(_ pattern: [UInt8], _ bytes: UnsafeBufferPointer<UInt8>, from: Int, to end: Int) -> Int {
        var i = from
        while i + pattern.count <= end {
            if bytes[i] == pattern[0] && UnsafeBufferPointer(rebasing: bytes[i..<i + pattern.count]).elementsEqual(pattern) { return i }
            i += 1
        }
        return end
    }

    /// The book objects of `ids` in `locales` (see `render(_:at:in:locales:names:into:)`).
    public func render(_ ids: [Int], at now: Int64, in country: String? = nil, locales: [String], into out: inout [UInt8]) {
        guard !locales.isEmpty else { return render(ids, at: now, in: country, into: &out) }
        let names = categoryNames(locales)
        for (i, id) in ids.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            render(id, at: now, in: country, locales: locales, names: names, into: &out)
        }
    }

    public func render(_ id: Int, at now: Int64, in country: String? = nil, locales: [String]) -> [UInt8]? {
        guard active.contains(id) else { return nil }
        var out: [UInt8] = []
        render([id], at: now, in: country, locales: locales, into: &out)
        return out
    }

    /// The title (in `locales`), author and language of an indexed book, and the language of a
    /// translated title shown (nil: the book's own), for highlights.
    public func displayFields(_ id: Int, locales: [String]) -> (title: String, author: String, language: String, titleLanguage: String?) {
        let fields = displayFields(id)
        for locale in locales {
            guard let bytes = localized[locale]?[id], bytes.first == UInt8(ascii: "\"") else { continue }
            let title = bytes[bytes.startIndex..<Self.literalEnd(bytes, from: bytes.startIndex)]
            let text = Self.stringValue(of: "t", in: ArraySlice(Array("\"t\":".utf8) + title)) ?? fields.title
            return (text, fields.author, fields.language, String(locale.prefix(2)))
        }
        return (fields.title, fields.author, fields.language, nil)
    }
}
