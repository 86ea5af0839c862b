import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// Parents' countries (which rights windows apply to them), kept per instance while
/// `catalog_state.countries_version` — read with the catalog version on every catalog request,
/// moved by a trigger whenever a country changes — stays the same.
final class ParentCountries: Sendable {
    static let limit = 100_000
    private struct State {
        var version = -1
        var countries: [Int: String] = [:]
    }
    private let state = NIOLockedValueBox(State())

    /// A parent's row: their own country, if set.
    struct Row: Decodable { let country: String? }

    /// The parent's country if known at `version`.
    func cached(_ parent: Int, version: Int) -> String? {
        state.withLockedValue { $0.version == version ? $0.countries[parent] : nil }
    }

    /// The parent's country (their own, else the configured default), read once per version.
    func country(of parent: Int, version: Int, default fallback: String, on sql: any SQLDatabase) async throws -> String {
        if let known = cached(parent, version: version) { return known }
        let row = try await sql.raw("SELECT country FROM parents WHERE id = \(bind: parent)").first(decoding: Row.self)
        let country = row?.country ?? fallback
        state.withLockedValue { state in
            if state.version != version {
                guard version > state.version else { return }
                state.version = version
                state.countries.removeAll(keepingCapacity: true)
            }
            if state.countries.count >= Self.limit { state.countries.removeAll(keepingCapacity: true) }
            state.countries[parent] = country
        }
        return country
    }
}


extension Request {
    /// The signed-in parent's country, as of the catalog state this request read.
    func parentCountry(version: Int) async throws -> String {
        try await application.appServices.parentCountries.country(of: try parentID, version: version, default: application.settings.defaultCountry, on: sql)
    }

    /// The signed-in parent's country (reads the countries version first).
    func parentCountry() async throws -> String {
        try await parentCountry(version: try await application.appServices.catalogCache.current(for: self).countriesVersion)
    }
}
