@testable import App
import Foundation
import SQLKit
import Testing
import Vapor
import VaporTesting

@Suite("Admin console")
struct ConsoleTests {
    @Test("sign in and out; pages need a session; the cookie is HttpOnly and SameSite", .app)
    func signIn() async throws {
        let app = try app()
        _ = try await Accounts.createStaff(email: "ed@storytime.test", passwordHash: try "staff password".hashedForTests(), role: .editor, on: app.sql)
        let client = ConsoleClient(app)
        let anonymous = try await client.get("/admin/books?status=active")
        #expect(anonymous.status == .seeOther && anonymous.location == "/admin/login?next=%2Fadmin%2Fbooks%3Fstatus%3Dactive")
        let form = try await client.get("/admin/login")
        #expect(form.html.contains(#"name="email""#) && form.html.contains(#"name="password""#) && form.html.contains("csrf_token"))
        let cookie = try #require(form.headers.setCookie?[AdminSession.cookieName])
        #expect(cookie.isHTTPOnly && cookie.sameSite == .lax)
        let wrong = try await client.post("/admin/login", [("email", "ed@storytime.test"), ("password", "nope")])
        #expect(wrong.status == .unauthorized && wrong.html.contains("Email or password is wrong.") && wrong.html.contains(#"value="ed@storytime.test""#))
        let ok = try await client.post("/admin/login", [("email", "ed@storytime.test"), ("password", "staff password"),
                                                        ("next", "/admin/books?status=active")])
        #expect(ok.status == .seeOther && ok.location == "/admin/books?status=active")
        #expect(try await client.get("/admin").html.contains("ed@storytime.test"))
        // sign-in rotated the session id (no fixation)
        #expect(client.cookie != cookie.string)
        let out = try await client.post("/admin/logout", [])
        #expect(out.status == .seeOther && out.location == "/admin/login?signed_out")
        #expect(try await client.get("/admin").status == .seeOther)
        // an open redirect is not followed
        try await client.get("/admin/login")
        let evil = try await client.post("/admin/login", [("email", "ed@storytime.test"), ("password", "staff password"), ("next", "//evil.example")])
        #expect(evil.location == "/admin")
    }

    @Test("a POST without a valid CSRF token is refused with 403 and changes nothing", .app)
    func csrf() async throws {
        let app = try app()
        let client = try await app.console(role: .admin)
        let missing = try await client.post("/admin/categories", [("name", "Space"), ("display_order", "1")], csrf: false)
        #expect(missing.status == .forbidden)
        let forged = try await client.post("/admin/categories", [("name", "Space"), ("display_order", "1"), ("csrf_token", "forged")], csrf: false)
        #expect(forged.status == .forbidden)
        #expect(try await app.count("SELECT count(*) AS n FROM categories") == 0)
        let anonymous = ConsoleClient(app)
        try await anonymous.get("/admin/login")
        #expect(try await anonymous.post("/admin/login", [("email", "x@y.z"), ("password", "p")], csrf: false).status == .forbidden)
    }

    @Test("categories: create with a derived slug, duplicates as field errors with input kept, list by order with counts, delete with a warning", .app)
    func categories() async throws {
        let app = try app()
        let client = try await app.console()
        let created = try await client.post("/admin/categories", [("name", "Animals & Nature"), ("slug", ""), ("display_order", "2"), ("icon_name", "pawprint")])
        #expect(created.status == .seeOther)
        let slug = try await app.sql.raw("SELECT slug FROM categories").first()!.decode(column: "slug", as: String.self)
        #expect(slug == "animals-nature")
        try await client.post("/admin/categories", [("name", "Bedtime"), ("slug", "bedtime"), ("display_order", "1"), ("icon_name", "")])

        let duplicateSlug = try await client.post("/admin/categories", [("name", "Night Time"), ("slug", "bedtime"), ("display_order", "3"), ("icon_name", "")])
        #expect(duplicateSlug.status == .unprocessableEntity)
        #expect(duplicateSlug.html.contains(#"<p class="error" id="error-slug">A category with this slug already exists.</p>"#))
        #expect(duplicateSlug.html.contains(#"value="Night Time""#))
        let duplicateName = try await client.post("/admin/categories", [("name", "BEDTIME"), ("slug", "other"), ("display_order", "3"), ("icon_name", "")])
        #expect(duplicateName.html.contains(#"id="error-name">A category with this name already exists."#))
        let badSlug = try await client.post("/admin/categories", [("name", "X"), ("slug", "Not OK"), ("display_order", "x"), ("icon_name", "")])
        #expect(badSlug.html.contains("error-display_order") && badSlug.status == .unprocessableEntity)
        #expect(try await app.count("SELECT count(*) AS n FROM categories") == 2)

        let bedtime = try await app.sql.raw("SELECT id FROM categories WHERE slug = 'bedtime'").first()!.decode(column: "id", as: Int.self)
        try await app.makeBook("One", categories: [bedtime])
        try await app.makeBook("Two", categories: [bedtime])
        let list = try await client.get("/admin/categories")
        let bedtimeRow = try #require(list.html.range(of: ">Bedtime</a>"))
        let animalsRow = try #require(list.html.range(of: ">Animals &amp; Nature</a>"))
        #expect(bedtimeRow.lowerBound < animalsRow.lowerBound)   // display_order 1 before 2
        #expect(list.html.contains(#"<td class="col-number">2</td>"#))   // book count

        let confirm = try await client.get("/admin/categories/\(bedtime)/delete")
        #expect(confirm.html.contains("2 books lose this category."))
        let deleted = try await client.post("/admin/categories/\(bedtime)/delete", [])
        #expect(deleted.status == .seeOther)
        #expect(try await app.count("SELECT count(*) AS n FROM book_categories") == 0)
        #expect(try await app.count("SELECT count(*) AS n FROM books") == 2)
        // every change is in the audit log
        let actions = try await app.sql.raw("SELECT action FROM audit_log WHERE table_name = 'categories' ORDER BY id").all()
            .map { try $0.decode(column: "action", as: String.self) }
        #expect(actions == ["create", "create", "delete"])
    }

    @Test("a viewer sees no edit controls and every write is 403", .app)
    func viewer() async throws {
        let app = try app()
        let category = try await app.makeCategory("Bedtime", slug: "bedtime")
        let book = try await app.makeBook("Owl Moon")
        let client = try await app.console(role: .viewer)
        let list = try await client.get("/admin/categories")
        #expect(list.status == .ok && !list.html.contains("New category"))
        let books = try await client.get("/admin/books")
        #expect(!books.html.contains("Apply to selected") && !books.html.contains(#"name="ids[]""#))
        #expect(!(try await client.get("/admin/books/\(book)")).html.contains(">Edit</a>"))
        for path in ["/admin/categories/new", "/admin/categories/\(category)/edit", "/admin/categories/\(category)/delete"] {
            #expect(try await client.get(path).status == .forbidden, "\(path)")
        }
        let writes: [(String, [(String, String)])] = [
            ("/admin/categories", [("name", "New"), ("display_order", "1")]),
            ("/admin/categories/\(category)", [("name", "Renamed"), ("slug", "bedtime"), ("display_order", "1")]),
            ("/admin/categories/\(category)/delete", []),
            ("/admin/books/batch", [("action", "set_status"), ("target_set_status", "archived"), ("ids[]", String(book))]),
            ("/admin/books/\(book)/rights_windows", [("starts_at", "2026-01-01T00:00")]),
        ]
        for (path, fields) in writes {
            #expect(try await client.post(path, fields).status == .forbidden, "\(path)")
        }
        #expect(try await app.count("SELECT count(*) AS n FROM categories WHERE name = 'Bedtime'") == 1)
        #expect(try await app.count("SELECT count(*) AS n FROM books WHERE status = 'active'") == 1)
        #expect(try await client.get("/admin/staff_users").status == .forbidden)   // admins only
    }

    @Test("book form: categories by checkbox, ages validated, nothing half-saved, audited with categories", .app)
    func bookForm() async throws {
        let app = try app()
        let a = try await app.makeCategory("Adventure", slug: "adventure")
        let b = try await app.makeCategory("Bedtime", slug: "bedtime")
        let publisher = try await app.makePublisher("Walker")
        let client = try await app.console()
        let form = try await client.get("/admin/books/new")
        #expect(form.html.contains(#"name="category_ids[]" value="\#(a)""#))
        let fields: [(String, String)] = [("title", "Moon Boat"), ("author", "Ann"), ("description", ""), ("age_min", "3"), ("age_max", "6"),
                                          ("language", "en"), ("cover_image_url", ""), ("publisher_id", String(publisher)), ("status", "active"),
                                          ("category_ids[]", String(a)), ("category_ids[]", String(b))]
        let created = try await client.post("/admin/books", fields)
        #expect(created.status == .seeOther)
        let id = try #require(created.location.flatMap { Int($0.split(separator: "/").last!) })
        #expect(try await app.count("SELECT count(*) AS n FROM book_categories WHERE book_id = \(bind: id)") == 2)

        // edit: drop a category, break the ages → error, nothing saved
        var broken = fields.filter { $0.0 != "category_ids[]" && $0.0 != "age_max" }
        broken += [("age_max", "2"), ("category_ids[]", String(a))]
        let invalid = try await client.post("/admin/books/\(id)", broken)
        #expect(invalid.status == .unprocessableEntity && invalid.html.contains("id=\"error-age_max\""))
        #expect(try await app.count("SELECT count(*) AS n FROM book_categories WHERE book_id = \(bind: id)") == 2)
        #expect(invalid.html.contains(#"value="\#(a)" checked"#) && !invalid.html.contains(#"value="\#(b)" checked"#))

        let fixed = broken.filter { $0.0 != "age_max" } + [("age_max", "7")]
        #expect(try await client.post("/admin/books/\(id)", fixed).status == .seeOther)
        let categories = try await app.sql.raw("SELECT category_id FROM book_categories WHERE book_id = \(bind: id)").all()
            .map { try $0.decode(column: "category_id", as: Int.self) }
        #expect(categories == [a])
        let audit = try await app.sql.raw("SELECT action, before->'category_ids' AS b, after->'category_ids' AS a FROM audit_log WHERE table_name = 'books' AND record_id = \(bind: id) ORDER BY id").all()
        #expect(audit.count == 2)
        #expect(try audit[1].decode(column: "b", as: String.self) == "[\(a), \(b)]")
        #expect(try audit[1].decode(column: "a", as: String.self) == "[\(a)]")
        let history = try await client.get("/admin/audit?table=books&record=\(id)")
        #expect(history.html.contains("category_ids") && history.html.contains("update"))
    }

    @Test("batch actions: add three books to a category in one go, then the parent API sees them", .app)
    func batchAndAPI() async throws {
        let app = try app()
        let space = try await app.makeCategory("Space", slug: "space")
        var books: [Int] = []
        for title in ["Moon", "Mars", "Venus", "Earth"] { books.append(try await app.makeBook(title)) }
        let client = try await app.console()
        let page = try await client.post("/admin/books/batch", [("action", "add_category"), ("target_add_category", String(space))]
                                         + books.prefix(3).map { ("ids[]", String($0)) } + [("return_to", "/admin/books?status=active")])
        #expect(page.status == .seeOther && page.location == "/admin/books?status=active")
        #expect(try await client.get("/admin/books").html.contains("3 books added to “Space”."))
        let parent = try await app.makeParent()
        let api = try await app.get("/api/v1/catalog/books?category=space", token: parent.token)
        #expect(try api.dataArray.map { $0["title"] as! String }.sorted() == ["Mars", "Moon", "Venus"])
        // again: nothing new, said so
        try await client.post("/admin/books/batch", [("action", "add_category"), ("target_add_category", String(space))] + books.prefix(3).map { ("ids[]", String($0)) })
        #expect(try await client.get("/admin/books").html.contains("0 books added to “Space” (3 already had it)."))
        // remove and change status, audited per book
        try await client.post("/admin/books/batch", [("action", "remove_category"), ("target_remove_category", String(space)), ("ids[]", String(books[0]))])
        try await client.post("/admin/books/batch", [("action", "set_status"), ("target_set_status", "archived"), ("ids[]", String(books[1])), ("ids[]", String(books[2]))])
        #expect(try await app.count("SELECT count(*) AS n FROM book_categories") == 2)
        #expect(try await app.count("SELECT count(*) AS n FROM books WHERE status = 'archived'") == 2)
        #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE action LIKE 'batch:%'") == 3 + 1 + 2)
        // a missing target is a message, not a change
        try await client.post("/admin/books/batch", [("action", "set_status"), ("ids[]", String(books[3]))])
        #expect(try await client.get("/admin/books").html.contains("Choose a status"))
    }

    @Test("rights windows: an end before the start is a field error; states and availability show on the book page", .app)
    func rightsWindows() async throws {
        let app = try app()
        let book = try await app.makeBook("Owl Moon", rights: .none)
        let client = try await app.console()
        let bad = try await client.post("/admin/books/\(book)/rights_windows", [("starts_at", "2026-05-01T10:00"), ("ends_at", "2026-04-01T10:00")])
        #expect(bad.status == .unprocessableEntity && bad.html.contains(#"id="error-ends_at">The end must be after the start."#))
        #expect(bad.html.contains(#"value="2026-05-01T10:00""#))
        #expect(try await app.count("SELECT count(*) AS n FROM rights_windows") == 0)
        let formatter = ISO8601DateFormatter()
        func local(_ date: Date) -> String { String(formatter.string(from: date).prefix(16)) }
        let now = Date()
        for (start, end) in [(now.addingTimeInterval(-86_400 * 10), now.addingTimeInterval(-86_400)),
                             (now.addingTimeInterval(86_400), nil as Date?),
                             (now.addingTimeInterval(-3600), now.addingTimeInterval(86_400 * 30))] {
            let saved = try await client.post("/admin/books/\(book)/rights_windows", [("starts_at", local(start)), ("ends_at", end.map(local) ?? "")])
            #expect(saved.status == .seeOther)
        }
        let show = try await client.get("/admin/books/\(book)")
        for state in ["expired", "upcoming", "active"] { #expect(show.html.contains(">\(state)</span>")) }
        #expect(show.html.contains("<dt>Rights available now</dt><dd>Yes</dd>"))
        #expect(show.html.contains("open-ended"))
    }

    @Test("durations show as m:ss or h:mm:ss, and — unless the video is ready", .app)
    func durations() async throws {
        let app = try app()
        let short = try await app.makeBook("Short", duration: 340)
        let long = try await app.makeBook("Long", duration: 3725)
        let pending = try await app.makeBook("Pending", video: "processing", duration: 100)
        let client = try await app.console(role: .viewer)
        #expect(try await client.get("/admin/books/\(short)").html.contains("<dt>Duration</dt><dd>5:40</dd>"))
        #expect(try await client.get("/admin/books/\(long)").html.contains("<dt>Duration</dt><dd>1:02:05</dd>"))
        #expect(try await client.get("/admin/books/\(pending)").html.contains("<dt>Duration</dt><dd>—</dd>"))
        let list = try await client.get("/admin/books")
        #expect(list.html.contains(#"<td class="col-duration">5:40</td>"#) && list.html.contains(#"<td class="col-duration">1:02:05</td>"#))
    }

    @Test("output is escaped: a category named <script>alert(1)</script> shows as text", .app)
    func escaping() async throws {
        let app = try app()
        let client = try await app.console()
        try await client.post("/admin/categories", [("name", "<script>alert(1)</script>"), ("slug", ""), ("display_order", "1"), ("icon_name", "")])
        let list = try await client.get("/admin/categories")
        #expect(list.html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!list.html.contains("<script>alert(1)</script>"))
    }

    @Test("books list: search, filters, sorting and paging at a fixed number of statements; estimates on big tables", .app)
    func bookList() async throws {
        let app = try app()
        let bedtime = try await app.makeCategory("Bedtime", slug: "bedtime")
        let harper = try await app.makePublisher("Harper")
        for i in 0..<30 {
            try await app.makeBook("Book \(i)", author: i == 7 ? "Zed Quill" : "Ann", status: i % 3 == 0 ? "draft" : "active",
                                   publisher: i % 2 == 0 ? harper : nil, categories: i % 5 == 0 ? [bedtime] : [],
                                   video: i % 4 == 0 ? nil : "ready", rights: i % 6 == 0 ? .expired : .active)
        }
        let client = try await app.console()
        func count(_ query: String) async throws -> String {
            let html = try await client.get("/admin/books?\(query)").html
            let start = try #require(html.range(of: #"id="result-count">"#))
            return String(html[start.upperBound...].prefix { $0 != "<" })
        }
        #expect(try await count("") == "30 books")
        #expect(try await count("status=draft") == "10 books")
        #expect(try await count("q=quill") == "1 book")
        #expect(try await count("publisher=\(harper)") == "15 books")
        #expect(try await count("category=\(bedtime)") == "6 books")
        #expect(try await count("rights=unavailable") == "5 books")
        #expect(try await count("video=none") == "8 books")
        #expect(try await count("status=active&video=none&publisher=\(harper)") == "5 books")
        let sorted = try await client.get("/admin/books?sort=-title&per_page=25")
        #expect(sorted.html.contains(#"aria-sort="descending""#) && sorted.html.contains("Page 1 of 2"))
        #expect(sorted.html.range(of: ">Book 9<")!.lowerBound < sorted.html.range(of: ">Book 8<")!.lowerBound)
        // fixed cost: the same number of statements for 25 and 100 rows
        let small = try await app.countQueries { _ = try await client.get("/admin/books?per_page=25&status=active") }
        let large = try await app.countQueries { _ = try await client.get("/admin/books?per_page=100&status=active") }
        #expect(small == large && small <= 6)
        // a big unfiltered table shows the planner's estimate instead of counting
        try await app.sql.raw("UPDATE pg_class SET reltuples = 1500000 WHERE oid = 'books'::regclass").run()
        #expect(try await count("") == "About 1,500,000 books")
        #expect(try await count("status=draft") == "10 books")
    }

    @Test("CSV export streams the current filter, with formulas defused", .app)
    func csvExport() async throws {
        let app = try app()
        try await app.makeBook("=HYPERLINK(\"x\")", author: "Ann, Smith")
        try await app.makeBook("Draft Book", status: "draft")
        let client = try await app.console(role: .viewer)
        let page = try await client.get("/admin/books/export.csv?status=active")
        #expect(page.status == .ok && page.headers.contentType?.subType == "csv")
        let lines = page.html.split(separator: "\r\n")
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("id,Title,Author,Status"))
        #expect(lines[1].contains(#"'=HYPERLINK(""x"")"#) && lines[1].contains(#""Ann, Smith""#))
    }

    @Test("dashboard: counts, rights starting and ending soon, books missing a video or a category", .app)
    func dashboard() async throws {
        let app = try app()
        let soon = try await app.makeBook("Starts Soon", rights: .none)
        try await app.sql.raw("INSERT INTO rights_windows (book_id, starts_at) VALUES (\(bind: soon), now() + interval '5 days')").run()
        try await app.makeBook("No Video", video: nil)
        let client = try await app.console(role: .viewer)
        let html = try await client.get("/admin").html
        #expect(html.contains("Starts Soon") && html.contains("No Video"))
        #expect(html.contains("Active books without a category (2)"))
    }

    @Test("rights warnings: an overlap, a gap, an active book no window covers now and rights running out within 30 days — on the book's page and the dashboard", .app)
    func rightsWarnings() async throws {
        let app = try app()
        let client = try await app.console(role: .viewer)
        let now = Date()
        let window = { (book: Int, starts: Double, ends: Double?) async throws -> Int in
            try await app.sql.raw("""
                INSERT INTO rights_windows (book_id, starts_at, ends_at)
                VALUES (\(bind: book), \(bind: now.addingTimeInterval(starts * 86_400)), \(bind: ends.map { now.addingTimeInterval($0 * 86_400) })) RETURNING id
                """).first()!.decode(column: "id", as: Int.self)
        }
        // Clean: back-to-back windows, one open-ended.
        let clean = try await app.makeBook("Clean Rights", rights: .none)
        _ = try await window(clean, -10, 5)
        _ = try await window(clean, 5, nil)
        var page = try await client.get("/admin/books/\(clean)").html
        #expect(page.contains("None: the windows follow one another without overlaps or gaps."))
        // Overlap, then a gap after everything earlier has ended; no window covers now; the
        // windows covering nothing now cannot run out, but the other book's do within 30 days.
        let messy = try await app.makeBook("Messy Rights", rights: .none)
        _ = try await window(messy, -40, -20)
        let overlapping = try await window(messy, -30, -10)
        let afterGap = try await window(messy, 3, 60)
        page = try await client.get("/admin/books/\(messy)").html
        #expect(page.contains("Worldwide: overlaps an earlier window") && page.contains("/admin/books/\(messy)/rights_windows/\(overlapping)/edit"))
        #expect(page.contains("Worldwide: gap before this window") && page.contains("/admin/books/\(messy)/rights_windows/\(afterGap)/edit"))
        #expect(page.contains("Active, but no rights window covers now"))
        #expect(!page.contains("Rights run out within 30 days"))
        let leaving = try await app.makeBook("Leaving Soon", rights: .none)
        _ = try await window(leaving, -1, 10)
        _ = try await window(leaving, 10, 20)
        page = try await client.get("/admin/books/\(leaving)").html
        #expect(page.contains("Rights run out within 30 days") && !page.contains("Gap before") && !page.contains("Overlaps"))
        // The dashboard lists the active books parents cannot watch now, and links to all of them.
        let dashboard = try await client.get("/admin").html
        let panel = try #require(dashboard.range(of: "Active books that no rights window covers now")).upperBound
        let noRights = dashboard[panel...].components(separatedBy: "</section>")[0]
        #expect(noRights.contains("Messy Rights") && !noRights.contains("Clean Rights") && !noRights.contains("Leaving Soon"))
        #expect(noRights.contains("/admin/books?status=active&amp;rights=unavailable"))
    }

    @Test("passwords: staff change their own (current one checked, field errors kept beside the fields), admins reset anyone's; every session of that user ends, the changer's own continues; a removed or demoted user's sessions end at once", .app)
    func passwords() async throws {
        let app = try app()
        let editor = try await app.console(role: .editor, email: "ed@storytime.test")
        let elsewhere = ConsoleClient(app)
        try await elsewhere.signIn("ed@storytime.test")
        // Field errors: wrong current password, too short, mismatch — nothing changes.
        try await editor.get("/admin/account/password")
        var page = try await editor.post("/admin/account/password", [("current", "not it"), ("password", "short"), ("confirm", "other")])
        #expect(page.status == .unprocessableEntity)
        #expect(page.html.contains(#"id="current-error""#) && page.html.contains(#"id="password-error""#) && page.html.contains(#"id="confirm-error""#))
        #expect(!page.html.contains("not it"))   // a typed password is never echoed
        #expect(try await elsewhere.get("/admin").status == .ok)
        // Without the CSRF token: refused.
        #expect(try await editor.post("/admin/account/password", [("current", "staff password"), ("password", "brand new pw 1"), ("confirm", "brand new pw 1")], csrf: false).status == .forbidden)
        page = try await editor.post("/admin/account/password", [("current", "staff password"), ("password", "brand new pw 1"), ("confirm", "brand new pw 1")])
        #expect(page.status == .seeOther || page.status == .found)
        #expect(try await editor.get("/admin").status == .ok)                       // still signed in, on a new session
        #expect(try await elsewhere.get("/admin").status == .seeOther)              // the other session ended
        let fresh = ConsoleClient(app)
        try await fresh.signIn("ed@storytime.test", password: "brand new pw 1")
        #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE action = 'password_change' AND table_name = 'staff_users'") == 1)
        #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE after::text LIKE '%$2%' OR before::text LIKE '%$2%'") == 0)
        // An admin resets the editor's password: both of the editor's sessions end.
        let admin = try await app.console(role: .admin)
        let id = try await app.sql.raw("SELECT id FROM staff_users WHERE email = 'ed@storytime.test'").first()!.decode(column: "id", as: Int.self)
        #expect(try await admin.get("/admin/staff_users/\(id)").html.contains("/admin/staff_users/\(id)/password"))
        #expect(try await editor.get("/admin/staff_users/\(id)/password").status == .forbidden)
        #expect(try await admin.post("/admin/staff_users/\(id)/password", [("password", "reset by admin 1"), ("confirm", "reset by admin 2")]).status == .unprocessableEntity)
        #expect(try await admin.post("/admin/staff_users/\(id)/password", [("password", "reset by admin 1"), ("confirm", "reset by admin 1")]).status == .seeOther)
        #expect(try await editor.get("/admin").status == .seeOther)
        #expect(try await fresh.get("/admin").status == .seeOther)
        #expect(try await admin.get("/admin").status == .ok)
        let again = ConsoleClient(app)
        try await again.signIn("ed@storytime.test", password: "reset by admin 1")
        // Demoted (by SQL here: any path) → signed out at once; removed → the same.
        try await app.sql.raw("UPDATE staff_users SET role = 'viewer' WHERE id = \(bind: id)").run()
        #expect(try await again.get("/admin").status == .seeOther)
        let viewer = ConsoleClient(app)
        try await viewer.signIn("ed@storytime.test", password: "reset by admin 1")
        try await app.sql.raw("DELETE FROM staff_users WHERE id = \(bind: id)").run()
        #expect(try await viewer.get("/admin").status == .seeOther)
        #expect(try await app.count("SELECT count(*) AS n FROM admin_sessions WHERE data->>'staffUserID' = \(bind: String(id))") == 0)
    }
}
