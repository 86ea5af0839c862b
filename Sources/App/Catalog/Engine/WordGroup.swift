import CatalogIndexing

/// The search words of kept answers and their forms, one object for every answer kept with the
/// same words (`AnswerMemo.group`: a search asked in five scopes, with filters, page after page).
/// A carry works out what of a change the words may reach once per group (`CarryCheck.verdict`)
/// and reads it from here for each answer: looking up each word of each answer in the check's
/// caches (hashing the word, reading the answer's arrays) was most of a carry's time.
final class WordGroup: @unchecked Sendable {
    let words: [String]
    let forms: [[String]]
    /// What the checks of a carry found for these words, in two slots, each stamped with its
    /// check (`CarryCheck.cache`). Written and read only by the thread that finishes carries (one
    /// runs at a time: `CatalogEngine.Carrying`); a request vetting an answer does not use them.
    var verdicts = (CarryCheck.WordVerdict(), CarryCheck.WordVerdict())

    init(_ words: [String], _ forms: [[String]]) { self.words = words; self.forms = forms }

    /// The group for answers without search words (browsing): nothing to work out.
    static let browsing = WordGroup([], [])
}
