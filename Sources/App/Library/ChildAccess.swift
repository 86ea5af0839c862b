import NIOConcurrencyHelpers
import SQLKit
import Vapor

extension Request {
    /// The path's `:child_id` when it names one of the caller's children. Anything else — not a
    /// number, unknown, another parent's — is the same 404.
    func ownedChildID() async throws -> Int {
        guard let id = parameters.get("child_id").flatMap({ Int($0) }), id > 0 else { throw Problem.notFound("No such child.") }
        return try await requireOwnChild(id)
    }

    /// `id` when it names one of the caller's children; otherwise the 404 `missing` describes.
    @discardableResult
    func requireOwnChild(_ id: Int, missing: String = "No such child.") async throws -> Int {
        guard try await sql.raw("SELECT 1 AS one FROM children WHERE id = \(bind: id) AND parent_id = \(bind: try parentID)").first() != nil else {
            throw Problem.notFound(missing)
        }
        return id
    }

    /// The path's child when it is the caller's, with its play count, activity counter (moved by
    /// every change to its plays or library; `migrations/0009`) and the catalog version, read
    /// after this request arrived — one statement shared by concurrent requests (`ChildStates`).
    func ownedChildState() async throws -> ChildState {
        guard let id = parameters.get("child_id").flatMap({ Int($0) }), id > 0,
              let state = try await application.childStates.reads.value(for: .init(child: id, parent: try parentID), on: self).get()
        else { throw Problem.notFound("No such child.") }
        return state
    }

    /// This request's answer about `child` from `ChildAnswers` when the child's state is the one
    /// it was computed at; otherwise `compute`'s (an answer and when it stops being right), kept.
    func childAnswer(_ child: ChildState, route: String,
                     compute: () async throws -> (response: Response, validUntil: Date?)) async throws -> Response {
        let key = "\(route)|\(child.id)|\(url.query ?? "")"
        return try await application.childAnswers.answer(for: key, fingerprint: child.fingerprint, on: eventLoop) {
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

    /// Equal fingerprints: the same plays, library, catalog and country.
    var fingerprint: String { "\(activity)|\(catalogVersion)|\(country ?? "")" }
}

/// Children's states, read in batches (`BatchedRead`): a key names the child and the parent
/// asking, and a child of another parent has no value.
final class ChildStates: Sendable {
    struct Key: Hashable, Sendable { let child: Int; let parent: Int }

    let reads = BatchedRead<Key, ChildState> { keys, sql in
        sql.raw("""
            SELECT c.id, c.parent_id, c.plays_count, c.activity, s.version, p.country
              FROM children c JOIN parents p ON p.id = c.parent_id CROSS JOIN catalog_state s WHERE c.id = ANY(\(bind: keys.map(\.child)))
            """).all().flatMapThrowing { rows in
            var states: [Key: ChildState] = [:]
            for row in rows {
                let key = Key(child: try row.decode(column: "id", as: Int.self), parent: try row.decode(column: "parent_id", as: Int.self))
                states[key] = ChildState(id: key.child, plays: try row.decode(column: "plays_count", as: Int.self),
                                         activity: try row.decode(column: "activity", as: Int.self),
                                         catalogVersion: try row.decode(column: "version", as: Int.self),
                                         country: try row.decode(column: "country", as: String?.self))
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
        let response = jsonResponse(entry.body)
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

extension Application {
    private struct ChildStatesKey: StorageKey { typealias Value = ChildStates }
    private struct ChildAnswersKey: StorageKey { typealias Value = ChildAnswers }

    var childStates: ChildStates {
        if let states = storage[ChildStatesKey.self] { return states }
        let states = ChildStates()
        storage[ChildStatesKey.self] = states
        return states
    }

    var childAnswers: ChildAnswers {
        if let answers = storage[ChildAnswersKey.self] { return answers }
        let answers = ChildAnswers()
        storage[ChildAnswersKey.self] = answers
        return answers
    }
}
