import Foundation
import SQLKit
import Vapor

/// Console: `/admin/books/:id/cover` — a book's cover as families see it, a form to upload a new
/// one (JPEG, PNG or WebP up to 10 MB; previewed in the page before it is sent), and removal.
/// Editors and admins; a refused file is the form again with the reason beside the field.
struct BookCoverController: RouteCollection {
    static let path = "cover"
    /// The multipart body's limit: the 10 MB image and the form around it.
    static let maxBody: ByteCount = "11mb"

    func boot(routes: any RoutesBuilder) throws {
        routes.get("books", ":id", .constant(Self.path), use: page)
        routes.post("books", ":id", .constant(Self.path), "remove", use: remove)
    }

    /// The upload is multipart, so it is registered before the CSRF middleware (which reads
    /// url-encoded forms) and checks the token itself, as the CSV import does. Its body is
    /// streamed: the role, the request's origin and its declared size are checked before a byte of
    /// it is read (a viewer's 10 MB is never collected).
    static func registerUpload(on routes: any RoutesBuilder) {
        routes.on(.POST, "books", ":id", .constant(path), body: .stream) { req async throws -> Response in
            try await upload(req: req)
        }
    }

    struct Page: Encodable {
        let layout: LayoutView
        let heading: String
        let bookURL: String
        let action: String
        let removeAction: String
        let cover: Cover?
        let error: String?
        struct Cover: Encodable { let webp: String; let jpeg: String; let width: Int; let height: Int; let color: String; let files: Int
            /// The height of the 160-pixel-wide box the page keeps for it.
            let boxHeight: Int }
    }

    private static func bookID(_ req: Request) throws -> Int {
        guard let id = req.parameters.get("id", as: Int.self), id > 0 else { throw Abort(.notFound) }
        return id
    }

    static func render(_ req: Request, book: Int, error: String?, status: HTTPStatus = .ok, retryAfter: Int? = nil) async throws -> Response {
        guard let row = try await BookCovers.current(book: book, on: req.sql) else { throw Abort(.notFound) }
        let title = row.title
        var cover: Page.Cover?
        if let files = row.files, !files.isEmpty, let width = row.width, let height = row.height, let color = row.dominant_color {
            let medium = files.count > 3 ? Array(files[2...3]) : Array(files.prefix(2))
            cover = Page.Cover(webp: "/covers/" + medium[0], jpeg: "/covers/" + (medium.last ?? medium[0]), width: width, height: height,
                               color: color, files: files.count, boxHeight: max(1, 160 * height / max(1, width)))
        }
        let record = AdminPath.record("books", book)
        let page = Page(layout: LayoutView(req, title: "Cover of \(title)", section: "books"), heading: "Cover of “\(title)”",
                        bookURL: record, action: record + "/" + path, removeAction: record + "/" + path + "/remove", cover: cover, error: error)
        return try await req.page("cover", page, status: status, headers: retryAfter.map { ["Retry-After": String($0)] } ?? [:])
    }

    @Sendable
    func page(req: Request) async throws -> Response {
        try req.requireEditor()
        return try await Self.render(req, book: try Self.bookID(req), error: nil)
    }

    struct Upload: Content { var csrf_token: String?; var file: File? }

    /// Role, origin and declared size, then the body, the form's token and the free checks; then a
    /// worker of this instance's `CoverGate` (none free and the line full: 503 with `Retry-After`
    /// at once), the user's budget spent (429) — both before any image is decoded — the work, and
    /// the save.
    static func upload(req: Request) async throws -> Response {
        try req.requireEditor()
        guard !CrossSite.isCrossSite(req) else { throw BookImportController.expiredForm }
        let book = try bookID(req)
        if let length = req.headers.first(name: .contentLength).flatMap(Int.init), length > maxBody.value {
            throw Abort(.payloadTooLarge, reason: "The image is larger than 10 MB.")
        }
        // With every worker busy and the line full, the 10 MB body is not even read.
        if req.appServices.coverGate.refusesNow() { return try await busy(req, book: book) }
        if req.body.data == nil { _ = try await req.body.collect(max: maxBody.value).get() }
        let upload = try? req.content.decode(Upload.self)
        guard req.adminSession.verifyCSRF(upload?.csrf_token) else { throw BookImportController.expiredForm }
        let staff = try req.staff
        do {
            guard let file = upload?.file, file.data.readableBytes > 0 else { throw CoverProcessor.Refusal(message: "Choose an image file.") }
            let data = Data(file.data.readableBytesView)
            try CoverProcessor.check(data)
            let result = try await req.appServices.coverGate.run {
                if let wait = try await BookCovers.reserveUpload(staff: staff.id, on: req.sql) { throw BudgetSpent(seconds: wait) }
                return try await CoverProcessor.process(data)
            }
            let saved = try await req.transaction { sql in
                try await BookCovers.save(result, book: book, staff: staff, store: PostgresCoverStore(), on: sql)
            }
            guard saved else { throw Abort(.notFound) }
        } catch let refusal as CoverProcessor.Refusal {
            return try await render(req, book: book, error: refusal.message, status: .unprocessableEntity)
        } catch let spent as BudgetSpent {
            let message = "You sent \(BookCovers.uploadsPerMinute) covers in the last minute; wait a minute and try again."
            return try await render(req, book: book, error: message, status: .tooManyRequests, retryAfter: spent.seconds)
        } catch is CoverGate.Busy {
            return try await busy(req, book: book)
        } catch let error where ConstraintViolation(error)?.constraint == "books_review_approved" {
            return try await render(req, book: book, error: Self.liveUnderReview, status: .conflict)
        }
        req.adminSession.flash("The cover was saved; families see it with the book's next answer.")
        return req.redirect(to: AdminPath.record("books", book) + "/" + path)
    }

    private static func busy(_ req: Request, book: Int) async throws -> Response {
        let message = "Other covers are being processed right now; try again in \(CoverGate.retryAfter) seconds. Nothing was saved."
        return try await render(req, book: book, error: message, status: .serviceUnavailable, retryAfter: CoverGate.retryAfter)
    }

    /// With review on, a cover is reviewed content (the trigger refuses a change on a live book).
    static let liveUnderReview = "With review on, a live book's cover changes only as a draft that is approved again: set the book back to draft, change its cover, and submit it for review. Nothing was saved."

    /// The user's uploads of this minute are spent; the seconds until the next minute's.
    struct BudgetSpent: Error { let seconds: Int }

    @Sendable
    func remove(req: Request) async throws -> Response {
        try req.requireEditor()
        let book = try Self.bookID(req)
        let staff = try req.staff
        let removed: Bool
        do {
            removed = try await req.transaction { sql in try await BookCovers.remove(book: book, staff: staff, on: sql) }
        } catch let error where ConstraintViolation(error)?.constraint == "books_review_approved" {
            return try await Self.render(req, book: book, error: Self.liveUnderReview, status: .conflict)
        }
        req.adminSession.flash(removed ? "The cover was removed." : "This book has no cover.")
        return req.redirect(to: AdminPath.record("books", book) + "/" + Self.path)
    }
}
