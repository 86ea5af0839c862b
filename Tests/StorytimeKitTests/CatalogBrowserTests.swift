import Clocks
import Foundation
import Testing
@testable import StorytimeKit

@Suite("StorytimeKit: the catalog screen's logic, against an in-memory server and a test clock")
struct CatalogBrowserTests {
    static let titles = ["Good Night Owl", "Goose Parade", "Goofy Goat", "Good Dog", "Bear Hunt"]
        + (1...40).map { "Moon Story \($0)" }

    /// A signed-in client over `FakeServer`, and a browser on a test clock.
    static func make(titles: [String] = titles) async throws -> (FakeServer, StorytimeClient, CatalogBrowser, TestClock<Duration>) {
        let server = FakeServer(titles: titles)
        let client = StorytimeClient(baseURL: server.baseURL, transport: server)
        try await client.signIn(email: "p@example.com", password: "pw")
        let clock = TestClock()
        return (server, client, CatalogBrowser(client: client, clock: clock), clock)
    }

    /// Just past `interval`: TestClock leaves a sleep that starts exactly at its deadline
    /// suspended, and the browser's debounce task may start sleeping after the test advances.
    static func past(_ interval: Duration) -> Duration { interval + .nanoseconds(1) }

    @Test("typing is debounced: only the text left standing for 300 ms is searched")
    func debounce() async throws {
        let (server, _, browser, clock) = try await Self.make()
        for text in ["g", "go", "goo"] {
            await browser.setQuery(text)
            await clock.advance(by: .milliseconds(100))
        }
        await clock.advance(by: .milliseconds(199))
        #expect(await server.catalogRequests.isEmpty)
        await clock.advance(by: Self.past(.milliseconds(1)))
        await browser.settle()
        #expect(await server.catalogRequests.map(\.q) == ["goo"])
        #expect(await browser.books.map(\.title) == ["Good Night Owl", "Goose Parade", "Goofy Goat", "Good Dog"])
        #expect(await browser.totalCount == 4)
    }

    @Test("infinite scroll: the next page loads within the last 3 rows and stops at page × per_page ≥ total")
    func infiniteScroll() async throws {
        let (server, _, browser, _) = try await Self.make()
        await browser.setQuery("moon")
        await browser.refresh()   // no debounce for a refresh
        await browser.settle()
        #expect(await browser.books.count == 20)
        #expect(await browser.totalCount == 40)
        #expect(await browser.hasMorePages)
        await browser.itemAppeared(at: 16)            // not yet within the last three
        await browser.settle()
        #expect(await server.catalogRequests.count == 1)
        await server.hold(q: "moon")
        await browser.itemAppeared(at: 17)
        while await server.catalogRequests.count < 2 { await Task.yield() }   // page 2 is in flight, held
        #expect(await browser.isLoadingMore)
        await browser.itemAppeared(at: 18)            // already loading: no second request
        await server.release(q: "moon")
        await browser.settle()
        #expect(await browser.books.count == 40)
        #expect(await browser.filter.currentPage == 2)
        #expect(await !browser.hasMorePages)           // 2 × 20 ≥ 40
        await browser.itemAppeared(at: 39)
        await browser.settle()
        #expect(await server.catalogRequests.map(\.page) == [1, 2])
        #expect(await Set(browser.books.map(\.id)).count == 40)
    }

    @Test("a new query, age or category starts over from page 1; tapping the active chip clears it")
    func resets() async throws {
        let (server, _, browser, clock) = try await Self.make()
        await browser.refresh()
        await browser.settle()
        await browser.loadNextPage()
        await browser.settle()
        #expect(await browser.filter.currentPage == 2)
        #expect(await browser.books.count == 40)
        await server.hold(q: "")
        await browser.setAgeRange(.preschool)
        #expect(await browser.filter.currentPage == 1)
        #expect(await browser.books.isEmpty)
        #expect(await browser.isLoading)
        await server.release(q: "")
        await browser.settle()
        #expect(await browser.books.count == 20)
        #expect(await browser.filter.age == 2)
        await browser.toggleCategory("bedtime")
        await browser.settle()
        #expect(await browser.filter.categorySlug == "bedtime")
        await browser.toggleCategory("bedtime")
        #expect(await browser.filter.categorySlug == nil)
        await browser.setQuery("dog")
        await clock.advance(by: Self.past(.milliseconds(300)))
        await browser.settle()
        #expect(await browser.books.map(\.title) == ["Good Dog"])
        #expect(await browser.filter.currentPage == 1)
        #expect(await server.catalogRequests.last?.page == 1)
    }

    @Test("a slow answer for an older query never overwrites the newer one")
    func staleAnswers() async throws {
        let (server, _, browser, clock) = try await Self.make()
        await server.hold(q: "goo")
        await browser.setQuery("goo")
        await clock.advance(by: Self.past(.milliseconds(300)))
        while await server.catalogRequests.isEmpty { await Task.yield() }   // "goo" is in flight, held
        await browser.setQuery("good")
        await clock.advance(by: Self.past(.milliseconds(300)))
        await browser.settle()
        #expect(await browser.books.map(\.title) == ["Good Night Owl", "Good Dog"])
        await server.release(q: "goo")                                       // the old answer arrives late
        for _ in 0..<200 { await Task.yield() }
        #expect(await browser.books.map(\.title) == ["Good Night Owl", "Good Dog"])
        #expect(await browser.totalCount == 2)
        #expect(await browser.filter.query == "good")
    }

    @Test("library: added at once, rolled back when refused; a 409 keeps it; typed errors carry code and Retry-After")
    func optimisticLibrary() async throws {
        let (server, client, _, _) = try await Self.make()
        let library = LibraryState(client: client, childID: 1)
        try await library.add(3)
        #expect(await library.isInLibrary(3))
        await server.refuse(book: 4, status: 422, code: "rights_unavailable")
        await #expect(throws: StorytimeError.unprocessable(code: "rights_unavailable", detail: "rights_unavailable here")) {
            try await library.add(4)
        }
        #expect(await !library.isInLibrary(4))
        await #expect(throws: StorytimeError.duplicate(detail: "duplicate here")) { try await library.add(3) }
        #expect(await library.isInLibrary(3))
        await server.refuse(book: 5, status: 429, code: "too_many_requests")
        do {
            try await library.add(5)
            Issue.record("a 429 was not thrown")
        } catch let error as StorytimeError {
            #expect(error == .tooManyRequests(detail: "too_many_requests here", retryAfter: 30))
            #expect(error.code == "too_many_requests")
        }
        try await library.remove(3)
        #expect(await !library.isInLibrary(3))
        try await client.addToLibrary(childID: 1, bookID: 7)   // added elsewhere: a reload sees it
        try await library.load()
        #expect(await library.isInLibrary(7))
        #expect(await library.count == 1)
    }

    @Test("an expired token is renewed once with the kept credentials; without credentials nothing is sent")
    func tokenRenewal() async throws {
        let (server, client, _, _) = try await Self.make()
        await server.expireTokens()
        #expect(try await client.books().meta.totalCount == Self.titles.count)
        #expect(await server.signIns == 2)
        #expect(await client.token == "token-2")
        let signedOut = StorytimeClient(baseURL: server.baseURL, transport: server)
        await #expect(throws: StorytimeError.notSignedIn) { try await signedOut.books() }
    }

    @Test("the age picker sends the range's lower bound; durations read 5:30 or 12 min")
    func ageAndDuration() {
        #expect(AgeRange.allCases.map(\.age) == [nil, 0, 2, 4, 6, 8])
        #expect(AgeRange.allCases.map(\.rawValue) == ["All Ages", "0-2", "2-4", "4-6", "6-8", "8+"])
        #expect(DurationFormat.badge(seconds: 330) == "5:30")
        #expect(DurationFormat.badge(seconds: 65) == "1:05")
        #expect(DurationFormat.badge(seconds: 599) == "9:59")
        #expect(DurationFormat.badge(seconds: 720) == "12 min")
        #expect(DurationFormat.badge(seconds: 749) == "12 min")
        #expect(DurationFormat.badge(seconds: nil) == nil && DurationFormat.badge(seconds: 0) == nil)
        var filter = CatalogFilterState(query: "  owl ", currentPage: 3)
        #expect(filter.searchText == "owl" && filter.reset.currentPage == 1)
        filter.query = "   "
        #expect(filter.searchText == nil)
        #expect(filter.hasPage(after: 1, totalCount: 21) && !filter.hasPage(after: 2, totalCount: 40))
    }
}
