import NIOConcurrencyHelpers
import SQLKit
import Vapor

extension Request {
    /// This request's answer about `child` from `ChildAnswers` when the child's state is the one
    /// it was computed at; otherwise `compute`'s (an answer and when it stops being right), kept.
    func childAnswer(_ child: ChildState, route: String,
                     compute: () async throws -> (response: Response, validUntil: Date?)) async throws -> Response {
        let key = "\(route)|\(child.id)|\(url.query ?? "")"
        return try await application.appServices.childAnswers.answer(for: key, fingerprint: child.fingerprint, on: eventLoop) {
            let (response, validUntil) = try await compute()
            return (response, key, validUntil)
        }
    }

    /// The country whose rights windows apply to `child`'s parent.
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
    /// The parent's country (nil: the configured default): which rights windows apply.
    let country: String?
    /// The child's family controls, read in the parent's time zone.
    var controls = ChildControls()
    /// The child's library when the controls are approved-only (what the catalog may show).
    var library: [Int]? = nil

    /// Equal fingerprints: the same plays, library, catalog and country.
    var fingerprint: String { "\(activity)|\(catalogVersion)|\(country ?? "")" }
}

/// Children's states, read in batches (`BatchedRead`): a key names the child and the parent
/// asking, and a child of another parent has no value.
final class ChildStates: Sendable {
    struct Key: Hashable, Sendable { let child: Int; let parent: Int }

    let reads = BatchedRead<Key, ChildState> { keys, sql in
        sql.raw("""
            SELECT c.id, c.parent_id, c.plays_count, c.activity, s.version, p.country, \(ChildControls.columns),
                   CASE WHEN cc.approved_only THEN ARRAY(SELECT le.book_id FROM library_entries le WHERE le.child_id = c.id) END AS library
              FROM children c \(ChildControls.joins) CROSS JOIN catalog_state s WHERE c.id = ANY(\(bind: keys.map(\.child)))
            """).all().flatMapThrowing { rows in
            var states: [Key: ChildState] = [:]
            for row in rows {
                let key = Key(child: try row.decode(column: "id", as: Int.self), parent: try row.decode(column: "parent_id", as: Int.self))
                states[key] = ChildState(id: key.child, plays: try row.decode(column: "plays_count", as: Int.self),
                                         activity: try row.decode(column: "activity", as: Int.self),
                                         catalogVersion: try row.decode(column: "version", as: Int.self),
                                         country: try row.decode(column: "country", as: String?.self),
                                         controls: try ChildControls(row: row), library: try row.decode(column: "library", as: [Int]?.self))
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

    func response(for key: String, fingerprint: String) -> Response? {
        guard let entry = entries.withLockedValue({ $0[key] }), entry.fingerprint == fingerprint,
              entry.validUntil.map({ $0 > Date() }) ?? true else { return nil }
        let response = Response.json(entry.body)
        if let link = entry.link { response.headers.replaceOrAdd(name: "Link", value: link) }
        return response
    }

    /// The answer kept for `key`, or `compute`'s, kept under the key it names. Concurrent requests
    /// for one key at one fingerprint compute it once: the others wait and then read it (or, when
    /// the computation failed or kept nothing under `key`, compute their own).
    func answer(for key: String, fingerprint: String, on loop: any EventLoop,
                compute: () async throws -> (response: Response, key: String, validUntil: Date?)) async throws -> Response {
        if let response = response(for: key, fingerprint: fingerprint) { return response }
        let promise = loop.makePromise(of: Void.self)
        let running = computing.withLockedValue { computing -> EventLoopFuture<Void>? in
            if let other = computing[key], other.fingerprint == fingerprint { return other.done }
            computing[key] = Computing(fingerprint: fingerprint, done: promise.futureResult)
            return nil
        }
        if let running {
            promise.succeed()
            try? await running.get()
            if let response = response(for: key, fingerprint: fingerprint) { return response }
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

