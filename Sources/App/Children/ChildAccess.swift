import NIOConcurrencyHelpers
import SQLKit
import Vapor

extension Request {
    /// This request's answer about `child` from `ChildAnswers` when the child's state is the one
    /// it was computed at; otherwise `compute`'s (an answer and when it stops being right), kept.
    func childAnswer(_ child: ChildState, route: String,
                     compute: () async throws -> (response: Response, validUntil: Date?)) async throws -> Response {
        let key = "\(route)|\(child.id)|\(url.query ?? "")"
        return try await application.appServices.childAnswers.answer(for: key, fingerprint: child.fingerprint, clock: application.appServices.clock, on: eventLoop) {
            let (response, validUntil) = try await compute()
            return (response, key, validUntil)
        }
    }

    /// The country whose rights windows apply to `child`'s family.
    func country(of child: ChildState) -> String {
        child.country ?? application.settings.defaultCountry
    }

    /// A positive integer path parameter, or the 404 `missing` describes.
    func pathID(_ name: String, missing: String) throws -> Int {
        guard let id = parameters.get(name).flatMap({ Int($0) }), id > 0 else { throw Problem.notFound(missing) }
        return id
    }
}

/// What answers about a child depend on besides the request: its plays and library (`activity`)
/// and the catalog (`catalogVersion`).
struct ChildState: Sendable {
    let id: Int
    let plays: Int
    let activity: Int
    let catalogVersion: Int
    /// The family's country (nil: the configured default): which rights windows apply.
    let country: String?
    /// The asking account's role in the child's family, and whether a caregiver may answer requests.
    var role: FamilyRole = .parent
    var mayAnswerRequests = false
    /// The child's family controls, read in the parent's time zone.
    var controls = ChildControls()
    /// The child's library when the controls are approved-only (what the catalog may show).
    var library: [Int]? = nil

    /// Equal fingerprints: the same plays, library, catalog and country.
    var fingerprint: String { "\(activity)|\(catalogVersion)|\(country ?? "")" }
}

/// Children's states, read in batches (`BatchedRead`): a key names the child and the account
/// asking, and a child outside that account's family has no value. Read on every request, so a
/// member removed from the family loses the children at once, on every instance.
final class ChildStates: Sendable {
    struct Key: Hashable, Sendable { let child: Int; let parent: Int }
    /// A child's row besides its controls (`ChildControls.Row`).
    struct Row: Decodable {
        let id: Int; let accountId: Int; let role: FamilyRole; let mayAnswerRequests: Bool
        let playsCount: Int; let activity: Int; let version: Int; let country: String?; let library: [Int]?
        /// The columns by name (no key conversion per row: read on every request about a child).
        enum CodingKeys: String, CodingKey {
            case id, accountId = "account_id", role, mayAnswerRequests = "may_answer_requests", playsCount = "plays_count", activity, version, country, library
        }
    }

    let reads = BatchedRead<Key, ChildState> { keys, sql in
        sql.raw("""
            SELECT c.id, m.account_id, m.role, m.may_answer_requests, c.plays_count, c.activity, s.version, p.country, \(ChildControls.columns),
                   CASE WHEN cc.approved_only THEN ARRAY(SELECT le.book_id FROM library_entries le WHERE le.child_id = c.id) END AS library
              FROM children c \(ChildControls.joins) JOIN family_members m ON m.family_id = c.family_id
             CROSS JOIN catalog_state s
             WHERE c.id = ANY(\(bind: keys.map(\.child))) AND m.account_id = ANY(\(bind: Array(Set(keys.map(\.parent)))))
            """).all().flatMapThrowing { rows in
            var states: [Key: ChildState] = [:]
            for row in rows {
                let r = try row.decode(model: Row.self)
                let key = Key(child: r.id, parent: r.accountId)
                states[key] = ChildState(id: key.child, plays: r.playsCount, activity: r.activity, catalogVersion: r.version,
                                         country: r.country, role: r.role, mayAnswerRequests: r.mayAnswerRequests,
                                         controls: try ChildControls(row: row), library: r.library)
            }
            return states
        }
    }
}

/// Answers about children (history pages, statistics, continue watching, library pages), each
/// kept with the fingerprint it was computed at and, when it shows rights that change with the
/// clock, the instant it stops being right. Exact: an answer is served only while the child's
/// state is the same and the instant has not come.
final class ChildAnswers: Sendable {
    static let limit = 10_000
    private struct Entry { let fingerprint: String; let validUntil: Date?; let body: ByteBuffer; let link: String? }
    private struct Computing { let fingerprint: String; let done: EventLoopFuture<Void> }
    private let entries = NIOLockedValueBox([String: Entry]())
    private let computing = NIOLockedValueBox([String: Computing]())

    /// The answer kept for `key` at `fingerprint`, when it is still right `now`.
    func response(for key: String, fingerprint: String, now: Date) -> Response? {
        guard let entry = entries.withLockedValue({ $0[key] }), entry.fingerprint == fingerprint,
              entry.validUntil.map({ $0 > now }) ?? true else { return nil }
        let response = Response.json(entry.body)
        if let link = entry.link { response.headers.replaceOrAdd(name: "Link", value: link) }
        return response
    }

    /// The answer kept for `key`, or `compute`'s, kept under the key it names. Concurrent requests
    /// for one key at one fingerprint compute it once: the others wait and then read it (or, when
    /// the computation failed or kept nothing under `key`, compute their own). `clock` says when a
    /// kept answer stops being right.
    func answer(for key: String, fingerprint: String, clock: AppClock, on loop: any EventLoop,
                compute: () async throws -> (response: Response, key: String, validUntil: Date?)) async throws -> Response {
        if let response = response(for: key, fingerprint: fingerprint, now: clock.now()) { return response }
        let promise = loop.makePromise(of: Void.self)
        let running = computing.withLockedValue { computing -> EventLoopFuture<Void>? in
            if let other = computing[key], other.fingerprint == fingerprint { return other.done }
            computing[key] = Computing(fingerprint: fingerprint, done: promise.futureResult)
            return nil
        }
        if let running {
            promise.succeed()
            try? await running.get()
            if let response = response(for: key, fingerprint: fingerprint, now: clock.now()) { return response }
            let (response, storeKey, validUntil) = try await compute()
            store(response, for: storeKey, fingerprint: fingerprint, validUntil: validUntil)
            return response
        }
        defer {
            computing.withLockedValue { if $0[key]?.done === promise.futureResult { $0[key] = nil } }
            promise.succeed()
        }
        let (response, storeKey, validUntil) = try await compute()
        store(response, for: storeKey, fingerprint: fingerprint, validUntil: validUntil)
        return response
    }

    /// Whether any answer about `child` is kept.
    func keepsAnswers(about child: Int) -> Bool {
        let marker = "|\(child)|"
        return entries.withLockedValue { $0.keys.contains { $0.contains(marker) } }
    }

    /// Drops every answer kept about `child` (a removed child).
    func forget(child: Int) {
        let marker = "|\(child)|"
        entries.withLockedValue { entries in
            for key in entries.keys where key.contains(marker) { entries.removeValue(forKey: key) }
        }
    }

    /// Keeps `response` (a JSON body, perhaps a Link header) for `key`.
    func store(_ response: Response, for key: String, fingerprint: String, validUntil: Date? = nil) {
        guard let body = response.body.buffer else { return }
        let entry = Entry(fingerprint: fingerprint, validUntil: validUntil, body: body, link: response.headers.first(name: "Link"))
        entries.withLockedValue {
            if $0.count >= Self.limit { $0.removeAll(keepingCapacity: true) }
            $0[key] = entry
        }
    }
}

