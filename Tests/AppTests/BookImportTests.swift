@testable import App
import Core
import Foundation
import SQLKit
import Testing
import Vapor

@Suite("Console: CSV import of books")
struct BookImportTests {
    @Test("upload → mapping → dry run per row (create, update, refused with the reason; refused rows as CSV) → one import, audited, upserting on external_id", .app)
    func importFlow() async throws {
        let app = try app()
        let walker = try await app.makePublisher("Walker Books")
        let fairy = try await app.makeCategory("Fairy tales", slug: "fairy")
        let animals = try await app.makeCategory("Animals", slug: "animals")
        let existing = try await app.makeBook("Old Title", rights: .none)
        try await app.sql.raw("UPDATE books SET external_id = 'ISBN-1', age_min = 2, age_max = 5 WHERE id = \(bind: existing)").run()
        let other = try await app.makeBook("Other", rights: .none)
        try await app.sql.raw("UPDATE books SET external_id = 'ISBN-7', age_min = 2, age_max = 5, status = 'draft' WHERE id = \(bind: other)").run()
        let client = try await app.console(role: .editor)
        // A viewer cannot import; a missing CSRF token is refused.
        #expect(try await app.console(role: .viewer).get("/admin/books/import").status == .forbidden)
        _ = try await client.get("/admin/books/import")
        #expect(try await client.upload("/admin/books/import", file: "x.csv", "title\r\nA", csrf: false).status == .forbidden)
        let csv = """
            Title,Author,ISBN,Ages from,Ages to,Publisher,Category,Starts,Ends,Countries,Status
            "Owl Moon, the film",Jane Yolen,ISBN-2,3,7,walker books,fairy;animals,2026-01-01T00:00,,FR BE,active
            New Title For Old,,ISBN-1,,,,,,,,
            ,No Title,ISBN-3,1,2,,,,,,draft
            Bad Ages,,ISBN-4,9,3,,,,,,draft
            Unknown Press,,ISBN-5,1,2,Nobody Press,,,,,draft
            Bad Country,,ISBN-6,1,2,,,2026-01-01T00:00,,FR ZZ,draft
            Twice,,ISBN-2,1,2,,,,,,draft
            Only Ages Max,,ISBN-7,,1,,,,,,
            """.replacingOccurrences(of: "\n", with: "\r\n")
        let uploaded = try await client.upload("/admin/books/import", file: "books.csv", csv)
        #expect(uploaded.status == .seeOther)
        let importPath = try #require(uploaded.location)
        // The mapping step guesses by header; the rest is chosen.
        let guessed = try await client.get(importPath).html
        #expect(guessed.contains("8 rows") && guessed.contains("<option value=\"0\" selected>Title</option>"))
        let mapping = "map_title=0&map_author=1&map_external_id=2&map_age_min=3&map_age_max=4&map_publisher=5&map_categories=6"
            + "&map_rights_starts_at=7&map_rights_ends_at=8&map_territories=9&map_status=10"
        let dry = try await client.get(importPath + "?dry_run=1&" + mapping).html
        #expect(dry.contains("1 to create, 1 to update, 6 refused, of 8 rows. Nothing has been written."))
        #expect(dry.contains("title: This field is required."))
        #expect(dry.contains("age_max: The maximum age cannot be below the minimum age."))
        #expect(dry.contains("publisher: no publisher is named Nobody Press."))
        #expect(dry.contains("&quot;ZZ&quot; is not an ISO 3166-1 alpha-2 country code"))
        #expect(dry.contains("external_id ISBN-2 is also on line 2."))
        #expect(try await app.count("SELECT count(*) AS n FROM books") == 2)   // a dry run writes nothing
        let refused = try await client.get(importPath + "/refused.csv?" + mapping)
        let lines = refused.html.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        #expect(lines.count == 7 && lines[0].hasSuffix(",reason") && lines[1].hasPrefix(",No Title,ISBN-3"))
        // Line 9 sets only age_max = 1 on a book whose age_min is 2: refused against the stored value.
        #expect(dry.contains("<td>9</td><td><span class=\"badge badge-refused\">refused</span></td><td>Only Ages Max</td><td>age_max: The maximum age cannot be below the minimum age."))

        // The import: one transaction, an audit row per book, the file marked imported.
        let form = mapping.split(separator: "&").map { pair -> (String, String) in
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init); return (parts[0], parts[1])
        }
        let done = try await client.post(importPath + "/run", form)
        #expect(done.status == .seeOther)
        let owl = try await app.sql.raw("""
            SELECT b.id, b.author, b.age_min, b.age_max, b.status, b.publisher_id,
                   ARRAY(SELECT category_id FROM book_categories WHERE book_id = b.id ORDER BY category_id) AS categories,
                   (SELECT array_to_string(territories, ',') FROM rights_windows WHERE book_id = b.id) AS territories
              FROM books b WHERE external_id = 'ISBN-2'
            """).first()!
        #expect(try owl.decode(column: "author", as: String.self) == "Jane Yolen" && owl.decode(column: "status", as: String.self) == "active")
        #expect(try owl.decode(column: "publisher_id", as: Int?.self) == walker && owl.decode(column: "categories", as: [Int].self) == [fairy, animals].sorted())
        #expect(try owl.decode(column: "territories", as: String.self) == "BE,FR")
        let old = try await app.sql.raw("SELECT title, age_min, age_max FROM books WHERE id = \(bind: existing)").first()!
        #expect(try old.decode(column: "title", as: String.self) == "New Title For Old" && old.decode(column: "age_min", as: Int.self) == 2)
        #expect(try await app.count("SELECT count(*) AS n FROM books") == 3)
        #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE action LIKE 'import #%' AND table_name = 'books'") == 2)
        #expect(try await app.count("SELECT count(*) AS n FROM audit_log WHERE action LIKE 'import #%' AND before IS NULL") == 1)
        let after = try await client.get(try #require(done.location)).html
        #expect(after.contains("Imported: 1 created, 1 updated."))
        // A second run changes nothing.
        _ = try await client.post(importPath + "/run", form)
        #expect(try await app.count("SELECT count(*) AS n FROM books") == 3)
        // The new book is in the parent catalog at once (active, with a window in FR only: a FR parent sees it).
        let parent = try await app.makeParent(country: "FR")
        let titles = try await app.get("/api/v1/catalog/books", token: parent.token).dataArray.compactMap { $0["title"] as? String }
        #expect(Set(titles) == ["Owl Moon, the film", "New Title For Old"])
    }

    @Test("CSV reading: quotes, doubled quotes, commas and line breaks in cells, CRLF or LF, a byte-order mark, blank lines")
    func reader() {
        let rows = CSVReader.rows("\u{FEFF}a,b,c\r\n\"x, y\",\"say \"\"hi\"\"\",\"two\nlines\"\n\n1,,3\n")
        #expect(rows == [["a", "b", "c"], ["x, y", "say \"hi\"", "two\nlines"], ["1", "", "3"]])
        #expect(CSVReader.rows("only") == [["only"]])
        #expect(CSVReader.rows("") == [])
    }

    @Test("dates typed or imported: the hand-written reader agrees with DateFormatter on 2,000 random instants in every accepted form, and refuses impossible ones")
    func dates() {
        func reference(_ text: String) -> Date? {
            for format in ["yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd HH:mm", "yyyy-MM-dd"] {
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.timeZone = TimeZone(identifier: "UTC")
                formatter.dateFormat = format
                if let date = formatter.date(from: text) { return date }
            }
            return nil
        }
        var rng = SystemRandomNumberGenerator()
        let forms = ["yyyy-MM-dd'T'HH:mm", "yyyy-MM-dd'T'HH:mm:ss", "yyyy-MM-dd HH:mm", "yyyy-MM-dd"]
        var compared = 0
        for _ in 0..<2_000 {
            let instant = Date(timeIntervalSince1970: Double(Int64.random(in: -2_000_000_000...4_000_000_000, using: &rng)))
            let writer = DateFormatter()
            writer.locale = Locale(identifier: "en_US_POSIX")
            writer.timeZone = TimeZone(identifier: "UTC")
            writer.dateFormat = forms.randomElement(using: &rng)!
            let text = writer.string(from: instant)
            #expect(FormValues.parseDate(text) == reference(text), "\(text)")
            compared += 1
        }
        #expect(compared == 2_000)
        for bad in ["2026-02-30", "2026-13-01", "2026-11-22T24:00", "2026-11-22T09:60", "2026-11-22X09:30", "22/11/2026", "2026-11-22T09:30:61", ""] {
            #expect(FormValues.parseDate(bad) == nil, "\(bad)")
        }
        #expect(FormValues.parseDate("2024-02-29T23:59:59") == reference("2024-02-29T23:59:59"))
    }
}
