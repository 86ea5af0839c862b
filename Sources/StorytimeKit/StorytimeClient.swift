import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession

/// The Storytime parent API for apps: sign in once, then one async method per route. Models are
/// the OpenAPI document's own (`Book`, `LibraryEntry`, …), generated at build time from the
/// document the server serves, so a field that drifts breaks the app's build rather than its users.
///
/// The token is kept in memory; a 401 signs in again once with the same credentials and retries.
/// Every write carries an `Idempotency-Key` and is retried with it when its answer is lost; GETs
/// revalidate what they already hold with its ETag (answered from memory on a 304).
/// Errors are `StorytimeError`s.
public final class StorytimeClient: Sendable {
    private let api: Client
    private let session: Session
    private let answers = ETagCacheMiddleware.Store(capacity: 500)
    let languages = LanguageStore()

    /// A client of the server at `baseURL` (e.g. `https://api.storytime.example`), over URLSession.
    public convenience init(baseURL: URL) {
        self.init(baseURL: baseURL, transport: URLSessionTransport())
    }

    /// A client over any transport (tests use an in-memory one).
    public init(baseURL: URL, transport: any ClientTransport) {
        let session = Session()
        self.session = session
        api = Client(serverURL: baseURL, transport: transport,
                     middlewares: [ProblemMiddleware(), IdempotencyMiddleware(), BearerMiddleware(session: session),
                                   LanguageMiddleware(store: languages), ETagCacheMiddleware(store: answers)])
    }

    // MARK: Signing in

    /// Signs in as a device named `deviceName` (listed in `devices()`) and keeps the tokens (and,
    /// should the refresh token be refused, the credentials, in memory only).
    public func signIn(email: String, password: String, deviceName: String? = nil) async throws {
        let token = try await perform {
            try await $0.createToken(body: .json(.init(email: email, password: password, deviceName: deviceName))).ok.body.json
        }
        await session.signedIn(token: token.accessToken, refreshToken: token.refreshToken, email: email, password: password)
    }

    /// Forgets the token and the credentials.
    public func signOut() async {
        answers.clear()
        await session.signOut()
    }

    /// The bearer token in use, if signed in.
    public var token: String? {
        get async { await session.token }
    }

    // MARK: Catalog

    /// A page of the catalog: every parameter of `GET /catalog/books`; `childID` applies that
    /// child's family controls to results, counts and facets.
    public func books(q: String? = nil, age: Int? = nil, publisher: Int? = nil, category: String? = nil,
                      sort: BookSort? = nil, page: Int? = nil, perPage: Int? = nil, childID: Int? = nil) async throws -> BookPage {
        try await authorized {
            try await $0.listBooks(query: .init(q: q, age: age, publisher: publisher, category: category,
                                                page: page, perPage: perPage, sort: sort, childId: childID)).ok.body.json
        }
    }

    /// As-you-type completions of `text` (words, then titles), scoped like the catalog.
    public func suggestions(_ text: String, childID: Int? = nil) async throws -> [Suggestion] {
        try await authorized { try await $0.suggestBooks(query: .init(q: text, childId: childID)).ok.body.json.data }
    }

    /// The page the catalog screen's filter asks for.
    public func books(_ filter: CatalogFilterState) async throws -> BookPage {
        try await books(q: filter.searchText, age: filter.age, category: filter.categorySlug,
                        page: filter.currentPage, perPage: filter.perPage, childID: filter.childID)
    }

    /// A book; with `childID`, `notFound` when that child's controls hide it.
    public func book(id: Int, childID: Int? = nil) async throws -> Book {
        try await authorized { try await $0.getBook(path: .init(id: id), query: .init(childId: childID)).ok.body.json.data }
    }

    public func categories() async throws -> [Category] {
        try await perform { try await $0.listCategories().ok.body.json.data }
    }

    /// The month grid of arrivals and departures (`month` as `YYYY-MM`).
    public func calendar(month: String? = nil, childID: Int? = nil, timeZone: String? = nil) async throws -> CalendarMonth {
        try await authorized {
            try await $0.catalogCalendar(query: .init(month: month, childId: childID, tz: timeZone)).ok.body.json.data
        }
    }

    /// One day of the calendar in full (`date` as `YYYY-MM-DD`).
    public func calendarDay(_ date: String, kind: CalendarKind? = nil, childID: Int? = nil, timeZone: String? = nil,
                            page: Int? = nil, perPage: Int? = nil) async throws -> CalendarDayPage {
        try await authorized {
            try await $0.catalogCalendarDay(path: .init(date: date),
                                            query: .init(kind: kind, childId: childID, tz: timeZone, page: page, perPage: perPage)).ok.body.json
        }
    }

    // MARK: Family controls

    public func me() async throws -> Me {
        try await authorized { try await $0.getMe().ok.body.json.data }
    }

    /// Sets the parent's time zone (an IANA name): days and bedtimes are read in it.
    @discardableResult
    public func setTimeZone(_ timeZone: String) async throws -> Me {
        try await authorized { try await $0.updateMe(body: .json(.init(timeZone: timeZone))).ok.body.json.data }
    }

    public func controls(childID: Int) async throws -> Controls {
        try await authorized { try await $0.getControls(path: .init(childId: childID)).ok.body.json.data }
    }

    /// Changes a child's controls: fields left nil keep their value (`ControlsChange`'s nullable
    /// fields are sent as given).
    @discardableResult
    public func updateControls(childID: Int, _ change: ControlsChange) async throws -> Controls {
        try await authorized { try await $0.setControls(path: .init(childId: childID), body: .json(change)).ok.body.json.data }
    }

    /// Today under the child's controls: minutes used and left, bedtime, whether a play is allowed.
    public func today(childID: Int) async throws -> Today {
        try await authorized { try await $0.childToday(path: .init(childId: childID)).ok.body.json.data }
    }

    // MARK: Children and libraries

    public func children() async throws -> [Child] {
        try await authorized { try await $0.listChildren().ok.body.json.data }
    }

    public func library(childID: Int, sort: LibrarySort? = nil, page: Int? = nil, perPage: Int? = nil,
                        leavingWithinDays: Int? = nil) async throws -> LibraryPage {
        try await authorized {
            try await $0.listLibrary(path: .init(childId: childID),
                                     query: .init(sort: sort, page: page, perPage: perPage, leavingWithinDays: leavingWithinDays)).ok.body.json
        }
    }

    @discardableResult
    public func addToLibrary(childID: Int, bookID: Int) async throws -> LibraryEntry {
        try await authorized {
            try await $0.addToLibrary(path: .init(childId: childID), body: .json(.init(bookId: bookID))).created.body.json.data
        }
    }

    public func removeFromLibrary(childID: Int, bookID: Int) async throws {
        try await authorized { _ = try await $0.removeFromLibrary(path: .init(childId: childID, bookId: bookID)).noContent }
    }

    /// Records a play; `playedAt` backdates it (past or now).
    @discardableResult
    public func recordPlay(childID: Int, bookID: Int, positionSeconds: Int, completed: Bool = false,
                           playedAt: Date? = nil) async throws -> Play {
        try await authorized {
            try await $0.recordPlay(path: .init(childId: childID, bookId: bookID),
                                    body: .json(.init(positionSeconds: positionSeconds, completed: completed, playedAt: playedAt))).created.body.json.data
        }
    }

    /// Permission to start a book's video now (a signed grant for the video CDN), or the play's
    /// refusal (`bedtime`, `time_limit_reached`, `blocked_by_controls`; `asset_not_ready`).
    public func playbackGrant(childID: Int, bookID: Int) async throws -> PlaybackGrant {
        try await authorized {
            try await $0.createPlaybackGrant(path: .init(childId: childID, bookId: bookID)).created.body.json.data
        }
    }

    /// Copies an entry to another of the parent's children.
    @discardableResult
    public func copyEntry(childID: Int, bookID: Int, to target: Int, preserveProgress: Bool = false) async throws -> LibraryEntry {
        try await authorized {
            try await $0.copyLibraryEntry(path: .init(childId: childID, bookId: bookID),
                                          body: .json(.init(toChildId: target, preserveProgress: preserveProgress))).created.body.json.data
        }
    }

    /// Moves an entry to another child; `removeSourceOnDuplicate` removes it from the source when
    /// the target already has it.
    @discardableResult
    public func moveEntry(childID: Int, bookID: Int, to target: Int, preserveProgress: Bool = false,
                          removeSourceOnDuplicate: Bool = false) async throws -> LibraryEntry {
        try await authorized {
            try await $0.moveLibraryEntry(path: .init(childId: childID, bookId: bookID),
                                          body: .json(.init(toChildId: target, preserveProgress: preserveProgress,
                                                            onDuplicate: removeSourceOnDuplicate ? .removeSource : nil))).ok.body.json.data
        }
    }

    /// Copies, moves or removes up to 100 books at once; duplicates are skipped and reported.
    public func bulk(childID: Int, action: BulkAction, bookIDs: [Int], to target: Int? = nil,
                     preserveProgress: Bool = false) async throws -> BulkResult {
        try await authorized {
            try await $0.bulkLibrary(path: .init(childId: childID),
                                     body: .json(.init(action: action, bookIds: bookIDs, toChildId: target,
                                                       preserveProgress: preserveProgress))).ok.body.json.data
        }
    }

    /// Adds every available book of a category (slug or id), at most `limit`.
    public func addCategory(childID: Int, category: String, limit: Int? = nil) async throws -> CategoryAddResult {
        try await authorized {
            try await $0.addCategoryToLibrary(path: .init(childId: childID, category: category),
                                              body: .json(.init(limit: limit))).ok.body.json.data
        }
    }

    // MARK: Plumbing

    /// Runs a call, turning whatever it throws into a `StorytimeError`.
    func perform<T>(_ call: (Client) async throws -> T) async throws(StorytimeError) -> T {
        do { return try await call(api) } catch { throw StorytimeError.from(error) }
    }

    /// Runs a call that needs the token; a 401 signs in again once and retries.
    func authorized<T>(_ call: (Client) async throws -> T) async throws(StorytimeError) -> T {
        guard let credentials = await session.credentials else { throw .notSignedIn }
        do {
            return try await perform(call)
        } catch .unauthorized {
            try await signInAgain(credentials)
            return try await perform(call)
        }
    }

    /// Renews the pair with the refresh token; when that is refused (the device was signed out),
    /// signs in again with the credentials.
    private func signInAgain(_ credentials: Session.Credentials) async throws(StorytimeError) {
        if let refresh = await session.refreshToken,
           let pair = try? await perform({ try await $0.refreshToken(body: .json(.init(refreshToken: refresh))).ok.body.json }) {
            await session.renewed(token: pair.accessToken, refreshToken: pair.refreshToken)
            return
        }
        do { try await signIn(email: credentials.email, password: credentials.password) } catch { throw StorytimeError.from(error) }
    }
}
