import Core
import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// Which locales a catalog request is answered in (docs/localization.md): `?locale=`, else
/// `Accept-Language`, else the account's preferred locale, else the default (`CatalogLocales`).
/// The chain chosen is kept on the request for the answer's `Content-Language`.
extension Request {
    private struct CatalogLanguageKey: StorageKey { typealias Value = [String] }

    /// The chain this request was answered in (nil before the catalog chose one).
    var catalogLanguage: [String]? {
        get { storage[CatalogLanguageKey.self] }
        set { storage[CatalogLanguageKey.self] = newValue }
    }

    /// `?locale=` (the raw value; a bad one is passed over, never an error) and `Accept-Language`.
    private var languageAsked: (query: String?, accept: String?) {
        ((try? QueryParameters(query: url.query).value("locale")) ?? nil, headers.first(name: .acceptLanguage))
    }

    /// The chain when no statement is needed: the request names a supported locale itself, there
    /// is no account, or the account's preference is known at `version`; nil otherwise.
    func knownCatalogLanguage(version: Int) -> [String]? {
        let locales = application.settings.catalogLocales, asked = languageAsked
        if locales.decides(query: asked.query, acceptLanguage: asked.accept) { return remember(locales.negotiate(query: asked.query, acceptLanguage: asked.accept, preferred: nil)) }
        guard let parent = try? parentID else { return remember([locales.defaultLocale]) }
        guard let preferred = application.appServices.parentLocales.cached(parent, version: version) else { return nil }
        return remember(locales.negotiate(query: nil, acceptLanguage: nil, preferred: preferred.value))
    }

    /// The chain, reading the account's preferred locale when the request names none.
    func catalogLanguage(version: Int) async throws -> [String] {
        if let known = knownCatalogLanguage(version: version) { return known }
        let preferred = try await application.appServices.parentLocales.preferred(of: try parentID, version: version, on: sql)
        return remember(application.settings.catalogLocales.negotiate(query: nil, acceptLanguage: nil, preferred: preferred))
    }

    private func remember(_ chain: [String]) -> [String] {
        catalogLanguage = chain
        return chain
    }
}

extension Response {
    /// `Content-Language` (the locale served) and `Vary: Accept-Language` on a catalog answer.
    func languageHeaders(_ req: Request) -> Response {
        if let served = req.catalogLanguage?.first { headers.replaceOrAdd(name: .contentLanguage, value: served) }
        headers.add(name: .vary, value: "Accept-Language")
        return self
    }
}

/// Accounts' preferred locales, kept per instance while `catalog_state.countries_version` (moved
/// by a trigger when one changes, as for countries) stays the same.
final class ParentLocales: Sendable {
    struct Preference: Sendable { let value: String? }
    private struct State { var version = -1; var locales: [Int: Preference] = [:] }
    private let state = NIOLockedValueBox(State())
    private struct Row: Decodable { let preferredLocale: String? }

    func cached(_ parent: Int, version: Int) -> Preference? {
        state.withLockedValue { $0.version == version ? $0.locales[parent] : nil }
    }

    func preferred(of parent: Int, version: Int, on sql: any SQLDatabase) async throws -> String? {
        if let known = cached(parent, version: version) { return known.value }
        let value = try await sql.raw("SELECT preferred_locale FROM parents WHERE id = \(bind: parent)")
            .first(decoding: Row.self, keyDecodingStrategy: .convertFromSnakeCase)?.preferredLocale
        state.withLockedValue { state in
            if state.version != version {
                guard version > state.version else { return }
                state.version = version
                state.locales.removeAll(keepingCapacity: true)
            }
            if state.locales.count >= ParentCountries.limit { state.locales.removeAll(keepingCapacity: true) }
            state.locales[parent] = Preference(value: value)
        }
        return value
    }
}
