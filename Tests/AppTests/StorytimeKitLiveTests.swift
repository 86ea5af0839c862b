@testable import App
import Core
import Foundation
import HTTPTypes
import OpenAPIRuntime
import OpenAPIURLSession
import StorytimeKit
import Testing
import Vapor

/// StorytimeKit over real HTTP (URLSession) against the real server on a fresh database.
@Suite("StorytimeKit against the live server")
struct StorytimeKitLiveTests {
    /// The app listening on a free loopback port, with the catalog engine built.
    static func withServer(tokenLifetime: TimeInterval = 3600, _ body: (Application, URL) async throws -> Void) async throws {
        let database = try await TestDatabase.create()
        let app = try await Application.make(.testing)
        app.logger.logLevel = .warning
        app.directory = DirectoryConfiguration(workingDirectory: TestDatabase.projectDirectory)
        var settings = testSettings(database: database)
        settings.tokenLifetime = tokenLifetime
        do {
            try await configure(app, settings: settings)
            try await app.appServices.catalogEngine.build(on: app.db)
            app.http.server.configuration.hostname = "127.0.0.1"
            app.http.server.configuration.port = 0
            try await app.server.start(address: nil)
            guard let port = app.http.server.shared.localAddress?.port else { throw TestFailure("the server has no port") }
            try await body(app, URL(string: "http://127.0.0.1:\(port)")!)
        } catch {
            Issue.record(error)
        }
        await app.server.shutdown()
        try await app.asyncShutdown()
        try await TestDatabase.drop(database)
    }

    @Test("child mode through the client: a parent pairs a tablet, the ChildSession browses as the child, asks, the parent approves, it plays; the PIN unpairs it")
    func childMode() async throws {
        try await Self.withServer { app, url in
            let young = try await app.makeBook("Owl Moon", ages: 2...4)
            let old = try await app.makeBook("Deep Sea", ages: 9...12)
            try await app.appServices.catalogEngine.build(on: app.db)
            _ = try await app.makeParent(email: "kid@example.com", password: "kit password", children: ["Ada"])
            let parent = StorytimeClient(baseURL: url)
            try await parent.signIn(email: "kid@example.com", password: "kit password")
            let ada = try await parent.children()[0].id
            _ = try await parent.updateControls(childID: ada, .init(maxAge: 6, approvedOnly: true))
            try await parent.setPIN("2468", password: "kit password")
            let pairing = try await parent.pairDevice(childID: ada, name: "Ada's tablet")
            #expect(try await parent.devices().contains { $0.id == pairing.device.id && $0.childId == ada })

            let tablet = await ChildSession(baseURL: url, pairing: pairing)
            let child = try await tablet.child()
            #expect(child.name == "Ada" && tablet.childID == ada)
            #expect(try await tablet.books().data.isEmpty)   // approved only: an empty library
            let asked = try await tablet.ask(bookID: young)
            let again = try await tablet.ask(bookID: young)
            #expect(asked.status == .pending && again.id == asked.id)
            await #expect(throws: StorytimeError.notFound(detail: "No such book.")) { try await tablet.ask(bookID: old) }
            #expect(try await parent.bookRequests(childID: ada).data.map(\.id) == [asked.id])
            #expect(try await parent.approveRequest(childID: ada, requestID: asked.id).request.status == .approved)
            #expect(try await tablet.books().data.map(\.id) == [young])
            #expect(try await tablet.library().data.map(\.id) == [young])
            #expect(try await tablet.recordPlay(bookID: young, positionSeconds: 60).positionSeconds == 60)
            #expect(try await tablet.today().minutesUsed == 1)
            let grant = try await tablet.playbackGrant(bookID: young)
            #expect(grant.expiresBecause == .maxLifetime && grant.token.split(separator: ".").count == 3)
            await #expect(throws: StorytimeError.forbidden(code: "wrong_pin", detail: "The PIN is wrong; 4 more tries before it is locked for 15 minutes.", retryAfter: nil)) {
                try await tablet.unlock(pin: "0000")
            }
            try await tablet.signOutThisDevice(pin: "2468")
            await #expect(throws: StorytimeError.notSignedIn) { try await tablet.today() }
            #expect(try await parent.devices().contains { $0.id == pairing.device.id } == false)
        }
    }

    @Test("every route through the client: catalog, detail, categories, children, library, plays, history, insights, transfers, calendar")
    func everyRoute() async throws {
        try await Self.withServer { app, url in
            let bedtime = try await app.makeCategory("Bedtime", slug: "bedtime")
            let owl = try await app.makeBook("Owl Moon", ages: 2...5, categories: [bedtime], duration: 330)
            let bear = try await app.makeBook("Bear Hunt", ages: 4...8, categories: [bedtime])
            let later = try await app.makeBook("Later Book", rights: .upcoming)
            try await app.appServices.catalogEngine.build(on: app.db)
            _ = try await app.makeParent(email: "kit@example.com", password: "kit password", children: ["Ada", "Ben"])
            let client = StorytimeClient(baseURL: url)
            try await client.signIn(email: "kit@example.com", password: "kit password")

            let found = try await client.books(q: "owl", age: 3, category: "bedtime", sort: .relevance, page: 1, perPage: 10)
            #expect(found.data.map(\.id) == [owl] && found.meta.totalCount == 1)
            #expect(found.meta.highlights?.first?.id == owl && found.meta.highlights?.first?.title.first?.match == .exact)
            let suggested = try await client.suggestions("owl")
            #expect(suggested.contains { $0.kind == .word && $0.text == "owl" } && suggested.contains { $0.kind == .title && $0.bookId == owl })
            #expect(try await client.book(id: owl).durationSeconds == 330)
            await #expect(throws: StorytimeError.notFound(detail: "No such book.")) { try await client.book(id: 999_999) }
            #expect(try await client.categories().map(\.slug).contains("bedtime"))
            let children = try await client.children()
            #expect(children.map(\.name) == ["Ada", "Ben"])
            let ada = children[0].id, ben = children[1].id

            let entry = try await client.addToLibrary(childID: ada, bookID: owl)
            #expect(entry.id == owl)
            // A 409 and a 422 surface as typed errors with the server's codes.
            do {
                try await client.addToLibrary(childID: ada, bookID: owl)
                Issue.record("no 409")
            } catch let error as StorytimeError {
                #expect(error.code == "duplicate")
            }
            do {
                try await client.addToLibrary(childID: ada, bookID: later)
                Issue.record("no 422")
            } catch let error as StorytimeError {
                guard case .unprocessable(let code, _) = error else { Issue.record("\(error)"); return }
                #expect(code == "rights_unavailable")
            }
            let play = try await client.recordPlay(childID: ada, bookID: owl, positionSeconds: 120,
                                                   playedAt: Date(timeIntervalSince1970: 1_790_000_000))
            #expect(play.positionSeconds == 120)
            try await client.recordPlay(childID: ada, bookID: owl, positionSeconds: 200)
            #expect(try await client.playbackGrant(childID: ada, bookID: owl).url.hasSuffix(".m3u8"))
            #expect(try await client.library(childID: ada, sort: .recentlyWatched).data.map(\.id) == [owl])
            let history = try await client.history(childID: ada, bookID: owl, timeZone: "Europe/Paris", page: 1, perPage: 10)
            #expect(history.meta.totalCount == 2 && history.data.first?.positionSeconds == 200)
            #expect(try await client.continueWatching(childID: ada).data.count == 1)
            #expect(try await client.stats(childID: ada, period: .all, timeZone: "UTC").plays == 2)
            let exported = try await client.exportHistory(childID: ada, format: .csv)
            #expect(String(decoding: exported, as: UTF8.self).split(whereSeparator: \.isNewline).count == 3)
            try await client.removePlay(childID: ada, playID: history.data[1].id)
            try await client.removeHistory(childID: ada, bookID: owl)
            #expect(try await client.history(childID: ada).meta.totalCount == 0)

            #expect(try await client.copyEntry(childID: ada, bookID: owl, to: ben).id == owl)
            try await client.removeFromLibrary(childID: ben, bookID: owl)
            #expect(try await client.moveEntry(childID: ada, bookID: owl, to: ben).id == owl)
            let bulk = try await client.bulk(childID: ben, action: .copy, bookIDs: [owl], to: ada)
            #expect(bulk.affected == 1)
            let added = try await client.addCategory(childID: ben, category: "bedtime")
            #expect(added.added == 1)                                             // bear; owl was there
            #expect(try await client.library(childID: ben).meta.totalCount == 2)
            _ = bear

            let month = try await client.calendar(month: "2026-11", childID: ada, timeZone: "UTC")
            #expect(month.days.count == 42)
            let day = try await client.calendarDay("2026-11-23", kind: .arriving)
            #expect(day.meta.totalCount >= 0)
        }
    }

    @Test("walking every page of a filter gives exactly its total, each book once")
    func walkPages() async throws {
        try await Self.withServer { app, url in
            for index in 0..<57 { _ = try await app.makeBook("Moon Walk \(index)", ages: 3...6) }
            _ = try await app.makeBook("Moon Too Old", ages: 9...12)
            try await app.appServices.catalogEngine.build(on: app.db)
            _ = try await app.makeParent(email: "walk@example.com", password: "walk password")
            let client = StorytimeClient(baseURL: url)
            try await client.signIn(email: "walk@example.com", password: "walk password")
            let browser = CatalogBrowser(client: client, filter: CatalogFilterState(query: "moon", perPage: 10))
            await browser.setAgeRange(.earlyReader)
            await browser.settle()
            while await browser.hasMorePages {
                await browser.itemAppeared(at: await browser.books.count - 1)
                await browser.settle()
            }
            let books = await browser.books
            #expect(await browser.totalCount == 57)
            #expect(books.count == 57 && Set(books.map(\.id)).count == 57)
            #expect(await browser.error == nil)
        }
    }

    @Test("an expired token is renewed once, over HTTP; wrong credentials are a typed 401")
    func tokenRenewal() async throws {
        // Five seconds: the renewed token must outlive the retry on a loaded CI machine (with one
        // second, a slow retry met an expired renewed token).
        try await Self.withServer(tokenLifetime: 5) { app, url in
            _ = try await app.makeParent(email: "renew@example.com", password: "renew password")
            let client = StorytimeClient(baseURL: url)
            do {
                try await client.signIn(email: "renew@example.com", password: "wrong")
                Issue.record("signed in with a wrong password")
            } catch let error as StorytimeError {
                #expect(error.code == "invalid_credentials")
            }
            try await client.signIn(email: "renew@example.com", password: "renew password")
            let first = await client.token
            app.appServices.clock.advance(by: 6.1)   // past the five-second lifetime (and nbf/exp rounding), by the app's clock
            #expect(try await client.children().count == 1)
            let second = await client.token
            #expect(first != nil && second != nil && first != second)
        }
    }

    @Test("family controls through the client: time zone, controls, a scoped catalog, today, and typed refusals")
    func familyControls() async throws {
        try await Self.withServer { app, url in
            let young = try await app.makeBook("Owl Moon", ages: 2...4)
            let old = try await app.makeBook("Owl Quest", ages: 9...12)
            try await app.appServices.catalogEngine.build(on: app.db)
            _ = try await app.makeParent(email: "fam@example.com", password: "fam password", children: ["Ada"])
            let client = StorytimeClient(baseURL: url)
            try await client.signIn(email: "fam@example.com", password: "fam password")
            let ada = try await client.children()[0].id
            #expect(try await client.setTimeZone("Europe/Paris").timeZone == "Europe/Paris")
            #expect(try await client.me().timeZone == "Europe/Paris")
            // A bedtime from now to an hour ahead in Paris, and a max age of 6.
            let paris = FamilyClock(timeZone: "Europe/Paris")!
            let now = paris.calendar.dateComponents([.hour, .minute], from: Date())
            let minutes = (now.hour ?? 0) * 60 + (now.minute ?? 0)
            let start = TimeOfDay(minutes: (minutes + 1439) % 1440)!, end = TimeOfDay(minutes: (minutes + 60) % 1440)!
            let controls = try await client.updateControls(childID: ada, .init(maxAge: 6, bedtime: .init(start: start.text, end: end.text)))
            #expect(controls.maxAge == 6 && controls.bedtime?.start == start.text && controls.timeZone == "Europe/Paris")
            #expect(try await client.controls(childID: ada) == controls)
            #expect(try await client.books(q: "owl", childID: ada).data.map(\.id) == [young])
            #expect(try await client.books(q: "owl").meta.totalCount == 2)
            do {
                _ = try await client.book(id: old, childID: ada)
                Issue.record("a hidden book was served")
            } catch let error as StorytimeError {
                #expect(error.code == "not_found")
            }
            do {
                try await client.addToLibrary(childID: ada, bookID: old)
                Issue.record("no 422")
            } catch let error as StorytimeError {
                #expect(error.familyControlRefusal == .blocked)
            }
            try await client.addToLibrary(childID: ada, bookID: young)
            do {
                try await client.recordPlay(childID: ada, bookID: young, positionSeconds: 10)
                Issue.record("no 403 at bedtime")
            } catch let error as StorytimeError {
                guard case .bedtime(let retryAfter)? = error.familyControlRefusal else { Issue.record("\(error)"); return }
                #expect((3_500...3_700).contains(retryAfter ?? 0))
            }
            let today = try await client.today(childID: ada)
            #expect(today.inBedtime && !today.canPlay && today.blockedReason == "bedtime" && today.timeZone == "Europe/Paris")
        }
    }
    @Test("a family signs itself up through the client: sign-up, the mailed link pasted, a child added, a device signed out, the account deleted")
    func selfService() async throws {
        try await Self.withServer { app, url in
            let client = StorytimeClient(baseURL: url)
            let notice = try await client.privacyNoticeVersion()
            try await client.signUp(email: "kit@example.com", password: "a long kit password", country: "FR", timeZone: "Europe/Paris", privacyNotice: notice)
            try await client.signIn(email: "kit@example.com", password: "a long kit password", deviceName: "Kitchen tablet")
            do {
                try await client.addChild(name: "Ada")
                Issue.record("an unverified account added a child")
            } catch let error as StorytimeError {
                #expect(error.code == "email_unverified")
            }
            // The link as the mail has it (no SMTP here: it waits in the outbox).
            let text = try await app.sql.raw("SELECT text_body FROM mail_outbox WHERE kind = 'verify'").one().decode(column: "text_body", as: String.self)
            let link = String(try #require(text.split(whereSeparator: \.isWhitespace).first { $0.contains("token=") }))
            try await client.verifyEmail(link: link)
            #expect(try await client.addChild(name: "Ada", birthYear: 2021, avatar: "owl").name == "Ada")

            let phone = StorytimeClient(baseURL: url)
            try await phone.signIn(email: "kit@example.com", password: "a long kit password", deviceName: "Phone")
            let devices = try await client.devices()
            #expect(devices.map(\.name).sorted() == ["Kitchen tablet", "Phone"])
            let other = try #require(devices.first { !$0.current })
            try await client.signOut(deviceID: other.id)
            #expect(try await client.devices().map(\.name) == ["Kitchen tablet"])
            let receipt = try await client.deleteAccount(password: "a long kit password")
            #expect(receipt.children == 1 && receipt.devices == 2)
        }
    }

    /// URLSession, but the answer of the first write to a path containing `losing` is lost after
    /// the server handled it (as on a train); counts the 304s it sees.
    final class LossyTransport: ClientTransport, @unchecked Sendable {
        let inner = URLSessionTransport()
        let losing: String
        private let lock = NSLock()
        private var lost = false
        private(set) var notModified = 0
        init(losing: String) { self.losing = losing }

        func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
            let (response, responseBody) = try await inner.send(request, body: body, baseURL: baseURL, operationID: operationID)
            let lose = lock.withLock {
                if response.status.code == 304 { notModified += 1 }
                guard request.method == .post, request.path?.contains(losing) == true, !lost else { return false }
                lost = true
                return true
            }
            if lose { throw URLError(.networkConnectionLost) }
            return (response, responseBody)
        }
    }

    @Test("conventions through the client: a lost play answer is retried once with its key, GETs revalidate by ETag, offline plays flush once, history by cursor")
    func conventions() async throws {
        try await Self.withServer { app, url in
            let owl = try await app.makeBook("Owl Moon", ages: 2...6)
            let bear = try await app.makeBook("Bear Hunt", ages: 2...6)
            try await app.appServices.catalogEngine.build(on: app.db)
            _ = try await app.makeParent(email: "conventions@example.com", password: "kit password", children: ["Ada"])
            let transport = LossyTransport(losing: "/plays")
            let client = StorytimeClient(baseURL: url, transport: transport)
            try await client.signIn(email: "conventions@example.com", password: "kit password")
            let ada = try await client.children()[0].id
            for book in [owl, bear] { _ = try await client.addToLibrary(childID: ada, bookID: book) }
            let plays = { try await app.sql.raw("SELECT count(*) AS n FROM plays").first()!.decode(column: "n", as: Int.self) }

            // The first play's answer is lost; the client sends it again with the same key: one play.
            _ = try await client.recordPlay(childID: ada, bookID: owl, positionSeconds: 60)
            #expect(try await plays() == 1)
            #expect(try await app.sql.raw("SELECT count(*) AS n FROM idempotency_keys").first()!.decode(column: "n", as: Int.self) >= 3)

            // The library twice: the second is a 304 answered from the kept copy.
            let first = try await client.library(childID: ada)
            let second = try await client.library(childID: ada)
            #expect(first.data.map(\.id) == second.data.map(\.id) && transport.notModified == 1)

            // Offline: three plays queued (on disk), flushed; flushed again after a "crash" that kept them.
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("plays-\(UUID().uuidString).json")
            defer { try? FileManager.default.removeItem(at: file) }
            let queue = OfflinePlayQueue(client: client, childID: ada, file: file)
            for minute in [30, 20, 10] {
                try await queue.record(bookID: bear, position: 100 - minute, completed: false, at: Date().addingTimeInterval(Double(-minute * 60)))
            }
            let kept = try Data(contentsOf: file)
            let results = try await queue.flush()
            let left = await queue.pending
            #expect(results.map(\.status) == [.recorded, .recorded, .recorded] && left.isEmpty)
            try kept.write(to: file)
            let reopened = OfflinePlayQueue(client: client, childID: ada, file: file)
            #expect(try await reopened.flush().map(\.status) == [.duplicate, .duplicate, .duplicate])
            #expect(try await plays() == 4)

            // History by cursor, two at a time: every play once, newest first.
            var positions: [Int] = []
            var cursor: String? = nil
            repeat {
                let (page, next) = try await client.historyPage(childID: ada, after: cursor, perPage: 2)
                positions += page.data.map(\.positionSeconds)
                cursor = next
            } while cursor != nil
            #expect(positions == [60, 90, 80, 70], "\(positions)")   // the online play is the newest
        }
    }
}
