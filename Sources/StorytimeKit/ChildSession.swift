import Foundation
import OpenAPIRuntime
import OpenAPIURLSession

/// A child's tablet (child mode): paired by a parent (`StorytimeClient.pairDevice`), it knows it
/// is a child device and offers only what a child may do — the catalog as that child (controls
/// applied by the server), the library, continue watching, today, plays and asking for a book.
/// Tokens renew with the refresh token; when that is refused the device was signed out
/// (`StorytimeError.notSignedIn`: pair again). Parent mode is `unlock(pin:)`: a parent token for
/// five minutes, used by `signOutThisDevice(pin:)` and kept by the app for parent screens.
public final class ChildSession: Sendable {
    public let childID: Int
    private let api: Client
    private let session: Session

    public convenience init(baseURL: URL, pairing: ChildPairing) async {
        await self.init(baseURL: baseURL, pairing: pairing, transport: URLSessionTransport())
    }

    public init(baseURL: URL, pairing: ChildPairing, transport: any ClientTransport) async {
        let session = Session()
        await session.paired(token: pairing.accessToken, refreshToken: pairing.refreshToken)
        self.session = session
        childID = pairing.childId
        api = Client(serverURL: baseURL, transport: transport, middlewares: [ProblemMiddleware(), BearerMiddleware(session: session)])
    }

    /// The child (its name and avatar, to greet it).
    public func child() async throws -> Child {
        try await authorized { [childID] in try await $0.getChild(path: .init(childId: childID)).ok.body.json.data }
    }

    /// The child's catalog: what its family controls leave, searched and filtered.
    public func books(q: String? = nil, age: Int? = nil, category: String? = nil, sort: BookSort? = nil,
                      page: Int? = nil, perPage: Int? = nil) async throws -> BookPage {
        try await authorized {
            try await $0.listBooks(query: .init(q: q, age: age, category: category, page: page, perPage: perPage, sort: sort)).ok.body.json
        }
    }

    public func book(id: Int) async throws -> Book {
        try await authorized { try await $0.getBook(path: .init(id: id)).ok.body.json.data }
    }

    public func library(sort: LibrarySort? = nil, page: Int? = nil) async throws -> LibraryPage {
        try await authorized { [childID] in
            try await $0.listLibrary(path: .init(childId: childID), query: .init(sort: sort, page: page)).ok.body.json
        }
    }

    public func continueWatching() async throws -> ContinuePage {
        try await authorized { [childID] in try await $0.continueWatching(path: .init(childId: childID)).ok.body.json }
    }

    /// Today's minutes and bedtime, and whether a play would be allowed now.
    public func today() async throws -> Today {
        try await authorized { [childID] in try await $0.childToday(path: .init(childId: childID)).ok.body.json.data }
    }

    /// Records a play; the controls may refuse it (`forbidden` with `bedtime`, `time_limit_reached`).
    @discardableResult
    public func recordPlay(bookID: Int, positionSeconds: Int, completed: Bool = false) async throws -> Play {
        try await authorized { [childID] in
            try await $0.recordPlay(path: .init(childId: childID, bookId: bookID),
                                    body: .json(.init(positionSeconds: positionSeconds, completed: completed))).created.body.json.data
        }
    }

    /// Permission to start a book's video now, as the tablet asks before it plays.
    public func playbackGrant(bookID: Int) async throws -> PlaybackGrant {
        try await authorized { [childID] in
            try await $0.createPlaybackGrant(path: .init(childId: childID, bookId: bookID)).created.body.json.data
        }
    }

    /// Asks a parent for a book of the catalog (asking again for a pending one returns it).
    @discardableResult
    public func ask(bookID: Int) async throws -> BookRequest {
        try await authorized { [childID] in
            let output = try await $0.askForBook(path: .init(childId: childID), body: .json(.init(bookId: bookID)))
            if case .ok(let ok) = output { return try ok.body.json.data }
            return try output.created.body.json.data
        }
    }

    public func requests(status: BookRequestStatus? = nil) async throws -> BookRequestPage {
        try await authorized { [childID] in
            try await $0.listBookRequests(path: .init(childId: childID), query: .init(status: status)).ok.body.json
        }
    }

    /// Parent mode: the parent's PIN (or, with `password`, the account password) for a parent
    /// token valid five minutes on this device.
    public func unlock(pin: String? = nil, password: String? = nil) async throws -> String {
        try await authorized { try await $0.unlockParentMode(body: .json(.init(pin: pin, password: password))).ok.body.json.accessToken }
    }

    /// Unpairs this tablet (parent mode): unlocks with the PIN, signs the device out, forgets the tokens.
    public func signOutThisDevice(pin: String) async throws {
        let gate = try await unlock(pin: pin)
        let (token, refresh) = (await session.token, await session.refreshToken)
        await session.renewed(token: gate, refreshToken: refresh ?? "")
        do { _ = try await perform { try await $0.logout().noContent } } catch {
            await session.renewed(token: token ?? "", refreshToken: refresh ?? "")
            throw error
        }
        await session.signOut()
    }

    // MARK: Plumbing

    private func perform<T>(_ call: (Client) async throws -> T) async throws(StorytimeError) -> T {
        do { return try await call(api) } catch { throw StorytimeError.from(error) }
    }

    /// A call with the device's token; a 401 renews the pair once with the refresh token.
    private func authorized<T>(_ call: (Client) async throws -> T) async throws(StorytimeError) -> T {
        guard await session.token != nil else { throw .notSignedIn }
        do {
            return try await perform(call)
        } catch .unauthorized {
            guard let refresh = await session.refreshToken,
                  let pair = try? await perform({ try await $0.refreshToken(body: .json(.init(refreshToken: refresh))).ok.body.json }) else {
                await session.signOut()
                throw .notSignedIn
            }
            await session.renewed(token: pair.accessToken, refreshToken: pair.refreshToken)
            return try await perform(call)
        }
    }
}
