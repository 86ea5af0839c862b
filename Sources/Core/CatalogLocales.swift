import Foundation

/// The locales a deployment's catalog speaks (`CATALOG_LOCALES`, the first the default) and how a
/// request's language is chosen among them (docs/localization.md):
/// `?locale=` wins, else `Accept-Language` by its q-values, else the account's preferred locale,
/// else the default. A tag is matched exactly, else by its language (`fr-CA` → `fr`), else to a
/// regional locale of that language (`fr` → `fr-CA`); an unknown or malformed one is passed over,
/// never an error.
public struct CatalogLocales: Sendable, Equatable {
    /// Normalized tags (`fr`, `fr-CA`), the default first.
    public let supported: [String]

    public init(_ supported: [String]) {
        let normalized = supported.compactMap(Self.normalize)
        var seen = Set<String>()
        self.supported = normalized.isEmpty ? ["en"] : normalized.filter { seen.insert($0).inserted }
    }

    /// Parses `CATALOG_LOCALES` ("en,fr,es,de"); nil when an entry is not a locale tag.
    public init?(setting: String) {
        let parts = setting.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !parts.isEmpty, parts.allSatisfy({ Self.normalize($0) != nil }) else { return nil }
        self.init(parts)
    }

    public var defaultLocale: String { supported[0] }

    /// `fr_ca`, `FR-ca` → `fr-CA`; nil for anything that is not `ll` or `ll-RR` (letters).
    public static func normalize(_ tag: String) -> String? {
        let parts = tag.replacingOccurrences(of: "_", with: "-").split(separator: "-", omittingEmptySubsequences: false)
        guard let language = parts.first, language.count == 2, language.allSatisfy({ $0.isASCII && $0.isLetter }) else { return nil }
        if parts.count >= 2, parts[1].count == 2, parts[1].allSatisfy({ $0.isASCII && $0.isLetter }) {
            return language.lowercased() + "-" + parts[1].uppercased()
        }
        return language.lowercased()
    }

    /// The supported locale serving `tag`, if any.
    public func match(_ tag: String) -> String? {
        guard let tag = Self.normalize(tag) else { return nil }
        if supported.contains(tag) { return tag }
        let language = String(tag.prefix(2))
        if supported.contains(language) { return language }
        return supported.first { $0.hasPrefix(language + "-") }
    }

    /// The locales a request's text is looked up in, in order: the served locale, then its
    /// language when that is supported too (`fr-CA`, `fr`). The book's own text is the last resort.
    public func chain(for served: String) -> [String] {
        let language = String(served.prefix(2))
        return served != language && supported.contains(language) ? [served, language] : [served]
    }

    /// The locale chain of a request: `query` (`?locale=`), then `acceptLanguage`, then the
    /// account's `preferred` locale, then the default.
    public func negotiate(query: String?, acceptLanguage: String?, preferred: String?) -> [String] {
        chain(for: served(query: query, acceptLanguage: acceptLanguage, preferred: preferred))
    }

    /// The locale served: see `negotiate`.
    public func served(query: String?, acceptLanguage: String?, preferred: String?) -> String {
        if let query, let found = match(query) { return found }
        if let acceptLanguage, let found = Self.ranges(acceptLanguage).lazy.compactMap(match).first { return found }
        if let preferred, let found = match(preferred) { return found }
        return defaultLocale
    }

    /// Whether the request names a locale itself (the account's preference is then not needed).
    public func decides(query: String?, acceptLanguage: String?) -> Bool {
        if let query, match(query) != nil { return true }
        if let acceptLanguage { return Self.ranges(acceptLanguage).contains { match($0) != nil } }
        return false
    }

    /// The language ranges of an `Accept-Language` value, best first (q descending, then as
    /// written); `*` and q=0 left out, a malformed q counted as 1.
    public static func ranges(_ header: String) -> [String] {
        var ranked: [(tag: String, q: Double, position: Int)] = []
        for (position, item) in header.split(separator: ",").enumerated() {
            let fields = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = fields.first, !tag.isEmpty, tag != "*" else { continue }
            var q = 1.0
            for field in fields.dropFirst() where field.lowercased().hasPrefix("q=") {
                if let value = Double(field.dropFirst(2)), value >= 0, value <= 1 { q = value }
            }
            if q > 0 { ranked.append((tag, q, position)) }
        }
        return ranked.sorted { $0.q != $1.q ? $0.q > $1.q : $0.position < $1.position }.map(\.tag)
    }
}
