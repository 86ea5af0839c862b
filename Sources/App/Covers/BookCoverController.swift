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
    /// url-encoded forms) and checks the token itself, as the CSV import does.
    static func registerUpload(on routes: any RoutesBuilder) {
        routes.on(.POST, "books", ":id", .constant(path), body: .collect(maxSize: maxBody)) { req async throws -> Response in
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

    static func render(_ req: Request, book: Int, error: String?, status: HTTPStatus = .ok) async throws -> Response {
        guard let row = try await req.sql.raw("""
            SELECT b.title, bc.width, bc.height, bc.dominant_color, bc.files FROM books b LEFT JOIN book_covers bc ON bc.book_id = b.id WHERE b.id = \(bind: book)
            """).first() else { throw Abort(.notFound) }
        let title = try row.decode(column: "title", as: String.self)
        var cover: Page.Cover?
        if let files = try row.decode(column: "files", as: [String]?.self), !files.isEmpty {
            let medium = files.count > 3 ? Array(files[2...3]) : Array(files.prefix(2))
            let width = try row.decode(column: "width", as: Int.self), height = try row.decode(column: "height", as: Int.self)
            cover = Page.Cover(webp: "/covers/" + medium[0], jpeg: "/covers/" + (medium.last ?? medium[0]), width: width, height: height,
                               color: try row.decode(column: "dominant_color", as: String.self), files: files.count,
                               boxHeight: max(1, 160 * height / max(1, width)))
        }
        let record = AdminPath.record("books", book)
        let page = Page(layout: LayoutView(req, title: "Cover of \(title)", section: "books"), heading: "Cover of “\(title)”",
                        bookURL: record, action: record + "/" + path, removeAction: record + "/" + path + "/remove", cover: cover, error: error)
        return try await req.view.render("cover", page).encodeResponse(status: status, for: req)
    }

    @Sendable
    func page(req: Request) async throws -> Response {
        try req.requireEditor()
        return try await Self.render(req, book: try Self.bookID(req), error: nil)
    }

    struct Upload: Content { var csrf_token: String?; var file: File? }

    static func upload(req: Request) async throws -> Response {
        try req.requireEditor()
        guard !CrossSite.isCrossSite(req) else { throw BookImportController.expiredForm }
        let book = try bookID(req)
        let upload = try? req.content.decode(Upload.self)
        guard req.adminSession.verifyCSRF(upload?.csrf_token) else { throw BookImportController.expiredForm }
        let staff = try req.staff
        do {
            guard let file = upload?.file, file.data.readableBytes > 0 else { throw CoverProcessor.Refusal(message: "Choose an image file.") }
            let result = try await CoverProcessor.process(Data(file.data.readableBytesView))
            let saved = try await req.transaction { sql in
                try await BookCovers.save(result, book: book, staff: staff, store: PostgresCoverStore(), on: sql)
            }
            guard saved else { throw Abort(.notFound) }
        } catch let refusal as CoverProcessor.Refusal {
            let status: HTTPStatus = refusal.message.contains("last minute") ? .tooManyRequests : .unprocessableEntity
            return try await render(req, book: book, error: refusal.message, status: status)
        }
        req.adminSession.flash("The cover was saved; families see it with the book's next answer.")
        return req.redirect(to: AdminPath.record("books", book) + "/" + path)
    }

    @Sendable
    func remove(req: Request) async throws -> Response {
        try req.requireEditor()
        let book = try Self.bookID(req)
        let staff = try req.staff
        let removed = try await req.transaction { sql in try await BookCovers.remove(book: book, staff: staff, on: sql) }
        req.adminSession.flash(removed ? "The cover was removed." : "This book has no cover.")
        return req.redirect(to: AdminPath.record("books", book) + "/" + Self.path)
    }
}
