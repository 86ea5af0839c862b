import Core
import SQLKit
import Vapor

/// `/admin/books/import`: upload a CSV, map its columns, see a dry run per row (create, update,
/// refused and why; the refused rows as CSV), then import in one transaction.
struct BookImportController: RouteCollection {
    /// The largest CSV accepted (about 100,000 books with descriptions).
    static let maxUpload: ByteCount = "64mb"
    /// Rows shown in the dry run (the counts and the refused CSV cover all of them).
    static let shownRows = 200

    func boot(routes: any RoutesBuilder) throws {
        routes.get("books", "import", use: uploadForm)
        routes.get("books", "import", ":import", use: mapping)
        routes.get("books", "import", ":import", "refused.csv", use: refused)
        routes.post("books", "import", ":import", "run", use: run)
    }

    /// What an uploaded file may hold. The mapping page lists every column in each of its selects,
    /// so columns and their names are bounded tightly; cells and rows bound the work of a dry run.
    enum Limits {
        static let columns = 40
        static let headerCell = 100
        static let cell = 10_000
        static let rows = 100_000

        /// Why `rows` (header first) cannot be imported, or nil.
        static func refusal(_ rows: [[String]]) -> String? {
            guard let header = rows.first, !header.isEmpty else { return "That file is not CSV text." }
            if rows.count - 1 > Self.rows { return "A file can hold at most \(Self.rows) rows; split it into several imports." }
            if let widest = rows.map(\.count).max(), widest > columns { return "A file can have at most \(columns) columns; this one has \(widest)." }
            if let index = header.firstIndex(where: { $0.count > headerCell }) {
                return "Column names must be at most \(headerCell) characters; column \(index + 1)'s is longer. Is the first row a header?"
            }
            if let line = rows.firstIndex(where: { $0.contains { $0.count > cell } }) {
                return "A cell can hold at most \(cell) characters; line \(line + 1) has a longer one."
            }
            return nil
        }
    }

    /// The upload is multipart (a file), so it is outside the urlencoded CSRF middleware: the body
    /// is streamed, and the role, the request's origin and its declared size are checked before a
    /// byte of it is read; the form's token after.
    static func registerUpload(on routes: any RoutesBuilder) {
        routes.on(.POST, "books", "import", body: .stream) { req async throws -> Response in
            try await upload(req: req)
        }
    }

    struct UploadPage: Encodable { let layout: LayoutView; let error: String? }

    @Sendable
    func uploadForm(req: Request) async throws -> View {
        try req.requireEditor()
        return try await req.view.render("import_upload", UploadPage(layout: LayoutView(req, title: "Import books", section: "books"), error: nil))
    }

    struct Upload: Content { var csrf_token: String?; var file: File? }

    static let expiredForm = Abort(.forbidden, reason: "The form has expired or did not come from this console. Go back, reload the page and try again.")

    static func upload(req: Request) async throws -> Response {
        try req.requireEditor()
        guard !CrossSite.isCrossSite(req) else { throw expiredForm }
        if let length = req.headers.first(name: .contentLength).flatMap(Int.init), length > maxUpload.value {
            throw Abort(.payloadTooLarge, reason: "The file is larger than \(maxUpload.value / 1_048_576) MB.")
        }
        if req.body.data == nil { _ = try await req.body.collect(max: maxUpload.value).get() }
        let upload = try? req.content.decode(Upload.self)
        guard req.adminSession.verifyCSRF(upload?.csrf_token) else { throw expiredForm }
        let layout = LayoutView(req, title: "Import books", section: "books")
        func refuse(_ message: String) async throws -> Response {
            try await req.view.render("import_upload", UploadPage(layout: layout, error: message)).encodeResponse(status: .unprocessableEntity, for: req)
        }
        guard let file = upload?.file, file.data.readableBytes > 0 else { return try await refuse("Choose a CSV file.") }
        let text = String(decoding: file.data.readableBytesView, as: UTF8.self)
        guard !text.unicodeScalars.contains("\u{0}") else { return try await refuse("That file is not CSV text.") }
        if let refusal = Limits.refusal(CSVReader.rows(text)) { return try await refuse(refusal) }
        let staff = try req.staff
        let id = try await BookImportQueries.store(staff: staff.id, filename: String(file.filename.prefix(200)), csv: text, on: req.sql)
        return req.redirect(to: AdminPath.bookImport + "/\(id)", redirectType: .normal)
    }

    struct Stored { let id: Int; let filename: String; let rows: [[String]]; let importedAt: Date? }

    private func stored(_ req: Request) async throws -> Stored {
        // An upload is its uploader's (and admins'): another editor gets the 404 of a missing one.
        let staff = try req.staff
        guard let id = req.parameters.get("import").flatMap(Int.init), id > 0,
              let row = try await BookImportQueries.upload(id, staff: staff, on: req.sql) else {
            throw Abort(.notFound)
        }
        return Stored(id: id, filename: row.filename, rows: CSVReader.rows(row.csv), importedAt: row.importedAt)
    }

    /// `map_<target>=<column index>` parameters (from the mapping form), else the header's guess.
    private func mapping(_ parameters: [(name: String, value: String)], header: [String]) -> [String: Int] {
        let given = parameters.filter { $0.name.hasPrefix("map_") }
        guard !given.isEmpty else { return BookImportPlan.guess(header) }
        var mapping: [String: Int] = [:]
        for (name, value) in given {
            let target = String(name.dropFirst(4))
            if BookImportPlan.targets.contains(where: { $0.name == target }), let index = Int(value), index >= 0, index < header.count {
                mapping[target] = index
            }
        }
        return mapping
    }

    private func plan(_ stored: Stored, mapping: [String: Int], on sql: any SQLDatabase) async throws -> BookImportPlan {
        let externalIDs = mapping["external_id"].map { index in stored.rows.dropFirst().compactMap { index < $0.count ? $0[index].trimmingCharacters(in: .whitespaces) : nil } } ?? []
        let lookups = try await BookImportPlan.Lookups.load(externalIDs: externalIDs, on: sql)
        return BookImportPlan.plan(csv: stored.rows, mapping: mapping, fields: AdminResource.books.form.fields, validate: AdminResource.books.form.validate, lookups: lookups)
    }

    struct Option: Encodable { let value: String; let label: String; let selected: Bool }
    struct Target: Encodable { let name: String; let label: String; let options: [Option] }
    struct Hidden: Encodable { let name: String; let value: String }
    struct Line: Encodable { let line: Int; let outcome: String; let title: String; let detail: String }
    struct DryRun: Encodable {
        let create: Int, update: Int, refuse: Int, total: Int
        let lines: [Line]
        let more: Int
        let refusedURL: String
    }
    struct MappingPage: Encodable {
        let layout: LayoutView
        let filename: String
        let rowCount: Int
        let action: String
        let targets: [Target]
        let dryRun: DryRun?
        let hidden: [Hidden]
        let runAction: String
        let importedAt: String?
    }

    @Sendable
    func mapping(req: Request) async throws -> View {
        try req.requireEditor()
        let stored = try await stored(req)
        let query = QueryParameters(query: req.url.query)
        let header = stored.rows.first ?? []
        let mapping = mapping(query.pairs.map { ($0.name, $0.value) }, header: header)
        let targets = BookImportPlan.targets.map { target in
            Target(name: "map_" + target.name, label: target.label,
                   options: [Option(value: "", label: "— not imported —", selected: mapping[target.name] == nil)]
                       + header.enumerated().map { Option(value: String($0.offset), label: $0.element, selected: mapping[target.name] == $0.offset) })
        }
        let hidden = mapping.sorted { $0.key < $1.key }.map { Hidden(name: "map_" + $0.key, value: String($0.value)) }
        var dryRun: DryRun?
        if query.pairs.contains(where: { $0.name == "dry_run" }) {
            let plan = try await plan(stored, mapping: mapping, on: req.sql)
            let counts = plan.counts
            let titleIndex = mapping["title"]
            let lines = plan.rows.prefix(Self.shownRows).map { row -> Line in
                let title = titleIndex.flatMap { $0 < row.cells.count ? row.cells[$0] : nil } ?? ""
                switch row.outcome {
                case .create: return Line(line: row.line, outcome: "create", title: title, detail: row.externalID.map { "new book, external_id \($0)" } ?? "new book")
                case .update(let id): return Line(line: row.line, outcome: "update", title: title, detail: "book #\(id)")
                case .refuse(let reason): return Line(line: row.line, outcome: "refused", title: title, detail: reason)
                }
            }
            let mappingQuery = hidden.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
            dryRun = DryRun(create: counts.create, update: counts.update, refuse: counts.refuse, total: plan.rows.count, lines: Array(lines),
                            more: max(0, plan.rows.count - Self.shownRows),
                            refusedURL: AdminPath.path("books", "import", String(stored.id), "refused.csv") + "?" + mappingQuery)
        }
        let page = MappingPage(layout: LayoutView(req, title: "Import books: \(stored.filename)", section: "books"), filename: stored.filename,
                               rowCount: max(0, stored.rows.count - 1), action: AdminPath.path("books", "import", String(stored.id)),
                               targets: targets, dryRun: dryRun, hidden: hidden, runAction: AdminPath.path("books", "import", String(stored.id), "run"),
                               importedAt: stored.importedAt.map(StaffTime(req.adminSession.user).format))
        return try await req.view.render("import_map", page)
    }

    @Sendable
    func refused(req: Request) async throws -> Response {
        try req.requireEditor()
        let stored = try await stored(req)
        let query = QueryParameters(query: req.url.query)
        let plan = try await plan(stored, mapping: mapping(query.pairs.map { ($0.name, $0.value) }, header: stored.rows.first ?? []), on: req.sql)
        return Response(status: .ok, headers: ["Content-Type": "text/csv; charset=utf-8",
                                               "Content-Disposition": "attachment; filename=\"refused-rows-\(stored.id).csv\""],
                        body: .init(string: plan.refusedCSV))
    }

    /// Imports the rows the dry run accepts, in one transaction; the file is marked imported so
    /// a second click does not create its new books twice.
    @Sendable
    func run(req: Request) async throws -> Response {
        try req.requireEditor()
        let stored = try await stored(req)
        let form = try FormBody(req)
        let mapping = mapping(form.parameters.pairs.map { ($0.name, $0.value) }, header: stored.rows.first ?? [])
        let audit = AuditWriter(staff: try req.staff)
        let result: (created: Int, updated: Int)?
        do { result = try await req.transaction { sql -> (created: Int, updated: Int)? in
            guard try await BookImportQueries.markImported(stored.id, on: sql) else { return nil }
            let plan = try await self.plan(stored, mapping: mapping, on: sql)
            let counts = try await BookImportRun.run(plan, file: stored.id, audit: audit, on: sql)
            try await BookImportQueries.enqueueFinished(stored.id, created: counts.created, updated: counts.updated, on: sql)
            return counts
        } } catch let error where ConstraintViolation(error)?.constraint == "books_review_approved" {
            // Review is on (CONSOLE_REVIEW): nothing was written, the file can be imported again.
            req.adminSession.flash("Nothing was imported: some rows would make books active that are not approved for families, or change a live book's content (with review on, that goes through review as a draft). Import them as drafts, or approve them first.")
            return req.redirect(to: AdminPath.path("books", "import", String(stored.id)), redirectType: .normal)
        }
        req.appServices.jobs.wake(WebhookDelivery.job)
        req.adminSession.flash(result.map { "Imported: \($0.created) created, \($0.updated) updated." } ?? "This file was already imported.")
        return req.redirect(to: AdminPath.path("books", "import", String(stored.id)), redirectType: .normal)
    }
}
