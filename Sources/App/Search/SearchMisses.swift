import Crypto
import Foundation
import NIOConcurrencyHelpers
import SQLKit
import Vapor

/// Searches that found nothing, counted for staff (console → Searches that found nothing) by
/// normalised query, country, week and cause — never a parent or child id. To show only queries
/// several families ran, each miss also stores a family key: the first 8 bytes of
/// HMAC-SHA256(SESSION_SECRET, week + account id), which differs every week and cannot be turned
/// back into an account without the secret. Rows older than `retentionWeeks` are deleted.
///
/// Misses are gathered in memory and written every few seconds by each instance, in one
/// statement per table (a search never waits for the write).
final class SearchMisses: Sendable {
    enum Cause: String, Sendable, CaseIterable {
        case notInCatalog = "not_in_catalog", licensedElsewhere = "licensed_elsewhere"
        case notLiveYet = "not_live_yet", hiddenByControls = "hidden_by_controls"
    }

    struct Miss: Sendable, Hashable {
        let query: String
        let country: String
        let week: Date
        let cause: Cause
    }

    static let retentionWeeks = 26
    static let flushInterval: Duration = .seconds(5)
    /// Beyond this many distinct misses waiting, new ones are dropped until the next write.
    static let maxPending = 10_000

    /// A query one family searched in a week (`family`: its key, the 8 bytes as one number),
    /// written once however often it ran.
    struct FamilySearch: Sendable, Hashable {
        let family: UInt64
        let query: String
        let week: Date
    }

    private let pending = NIOLockedValueBox<(counts: [Miss: Int], families: Set<FamilySearch>)>(([:], []))
    /// Family keys already worked out, per account (each holds for its week): one HMAC per family
    /// and week instead of one per miss. Forgotten past `maxKnownFamilies`.
    private let familyKeys = NIOLockedValueBox<[Int: (week: Date, key: UInt64)]>([:])
    static let maxKnownFamilies = 10_000

    /// Counts one search of `words` that found nothing, in the week of `now`.
    func record(words: [String], country: String?, cause: Cause, account: Int?, secret: String, now: Date) {
        let query = words.joined(separator: " ")
        guard !query.isEmpty else { return }
        let week = Self.week(of: now)
        let miss = Miss(query: String(query.prefix(200)), country: country ?? "", week: week, cause: cause)
        let family = account.map { familyKey(account: $0, week: week, secret: secret) }
        pending.withLockedValue { state in
            guard state.counts[miss] != nil || state.counts.count < Self.maxPending else { return }
            state.counts[miss, default: 0] += 1
            if let family { state.families.insert(FamilySearch(family: family, query: miss.query, week: week)) }
        }
    }

    /// The Monday (UTC) starting the week of `date`.
    /// By arithmetic (a search that found nothing runs this; a calendar per call cost more than
    /// the search): 1970-01-05 was a Monday, and UTC weeks are 604,800 seconds.
    static func week(of date: Date) -> Date {
        let monday: Double = 4 * 86_400, week: Double = 7 * 86_400
        return Date(timeIntervalSince1970: ((date.timeIntervalSince1970 - monday) / week).rounded(.down) * week + monday)
    }

    /// `familyKey(account:week:secret:)`, from the kept keys when this week's is known.
    private func familyKey(account: Int, week: Date, secret: String) -> UInt64 {
        if let known = familyKeys.withLockedValue({ $0[account] }), known.week == week { return known.key }
        let key = Self.familyKey(account: account, week: week, secret: secret).withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        familyKeys.withLockedValue { keys in
            if keys.count >= Self.maxKnownFamilies { keys.removeAll(keepingCapacity: true) }
            keys[account] = (week, key)
        }
        return key
    }

    static func familyKey(account: Int, week: Date, secret: String) -> [UInt8] {
        let message = Data("\(Int(week.timeIntervalSince1970)):\(account)".utf8)
        return Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(secret.utf8)))).prefix(8).map { $0 }
    }

    /// Writes what was gathered (then forgets it); old weeks are deleted on the way.
    func flush(on sql: any SQLDatabase) async throws {
        let (counts, families) = pending.withLockedValue { state in
            defer { state = ([:], []) }
            return (state.counts, state.families)
        }
        guard !counts.isEmpty else { return }
        let misses = Array(counts.keys)
        try await sql.raw("""
            INSERT INTO search_misses (query, country, week, cause, searches)
            SELECT * FROM unnest(\(bind: misses.map(\.query))::text[], \(bind: misses.map(\.country))::text[],
                                 \(bind: misses.map(\.week))::timestamptz[]::date[], \(bind: misses.map(\.cause.rawValue))::text[],
                                 \(bind: misses.map { counts[$0]! })::bigint[])
            ON CONFLICT (query, country, week, cause) DO UPDATE SET searches = search_misses.searches + excluded.searches
            """).run()
        if !families.isEmpty {
            let entries = Array(families)
            try await sql.raw("""
                INSERT INTO search_miss_families (query, week, family)
                SELECT * FROM unnest(\(bind: entries.map(\.query))::text[], \(bind: entries.map(\.week))::timestamptz[]::date[],
                                     \(bind: entries.map { withUnsafeBytes(of: $0.family) { Data($0) } })::bytea[])
                ON CONFLICT DO NOTHING
                """).run()
        }
        try await sql.raw("DELETE FROM search_misses WHERE week < current_date - \(bind: Self.retentionWeeks * 7)::int").run()
        try await sql.raw("DELETE FROM search_miss_families WHERE week < current_date - \(bind: Self.retentionWeeks * 7)::int").run()
    }
}
