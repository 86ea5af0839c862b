/// Where the loader puts a book's display fields in its JSON (`CatalogLoader.makeBook`): the author
/// after the two ages, the language after the description and three scalars, the title after the
/// rights (spliced in when rendered) and the status. A page's highlights read each field where
/// its layout says, comparing the keys there instead of looking for them through the object (the
/// search was half of reading a page's fields). Any other layout — a book patched or loaded
/// otherwise — is looked for as before (`displayFields`).
extension CatalogIndex {
    /// Whether each of `id`'s display fields stands where the loader lays it out (what the
    /// highlights then read without looking for it; tests).
    func isLaidOut(_ id: Int) -> Bool {
        let range = json.range(id), bytes = json.storage[range]
        guard id < rightsOffset.count, id < descriptionStart.count else { return false }
        return Layout.title.start(in: bytes, from: range.lowerBound + Int(rightsOffset[id])) != nil
            && Layout.author.start(in: bytes, from: range.lowerBound) != nil
            && Layout.language.start(in: bytes, from: range.lowerBound + Int(descriptionStart[id]) + Int(descriptionLength[id])) != nil
    }

    struct Layout {
        /// The keys met before the field, each followed by a number, a boolean or null.
        let scalars: [[UInt8]]
        /// The field's own key up to its value's opening quote, and what may stand before it.
        let key: [UInt8]

        static let author = Layout(scalars: [Array(#"{"age_max":"#.utf8), Array(#","age_min":"#.utf8)], key: Array(#","author":""#.utf8))
        static let language = Layout(scalars: [Array(#","duration_seconds":"#.utf8), Array(#","has_captions":"#.utf8), Array(#","id":"#.utf8)],
                                     key: Array(#","language":""#.utf8))
        static let title = Layout(scalars: [], key: Array(#","status":"active","title":""#.utf8))

        /// The index of the field's first byte of value in `bytes` when it stands as laid out from
        /// `from`; nil otherwise.
        func start(in bytes: ArraySlice<UInt8>, from: Int) -> Int? {
            var at = from
            for key in scalars {
                guard Self.has(key, in: bytes, at: at) else { return nil }
                at += key.count
                // A number, a boolean or null: up to the next comma (none holds one).
                while at < bytes.endIndex && bytes[at] != UInt8(ascii: ",") {
                    guard bytes[at] != UInt8(ascii: "\""), bytes[at] != UInt8(ascii: "}") else { return nil }
                    at += 1
                }
            }
            guard Self.has(key, in: bytes, at: at) else { return nil }
            return at + key.count
        }

        static func has(_ key: [UInt8], in bytes: ArraySlice<UInt8>, at: Int) -> Bool {
            guard at >= bytes.startIndex, bytes.endIndex - at >= key.count else { return false }
            for i in 0..<key.count where bytes[at + i] != key[i] { return false }
            return true
        }
    }
}
