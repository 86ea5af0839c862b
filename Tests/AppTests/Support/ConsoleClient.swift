@testable import App
import Foundation
import Vapor
import VaporTesting
import SQLKit

/// A browser-like client of the console: keeps the session cookie and sends the CSRF token.
final class ConsoleClient {
    let app: Application
    var cookie: String?
    var csrf: String?

    init(_ app: Application) { self.app = app }

    struct Page {
        let status: HTTPStatus
        let headers: HTTPHeaders
        let html: String
        var location: String? { headers.first(name: .location) }
    }

    @discardableResult
    func get(_ path: String) async throws -> Page {
        var headers = HTTPHeaders()
        if let cookie { headers.replaceOrAdd(name: .cookie, value: "\(AdminSession.cookieName)=\(cookie)") }
        let response = try await app.testing().sendRequest(.GET, path, headers: headers)
        return remember(response)
    }

    /// Posts a form; the session's CSRF token is added unless `csrf` is false.
    @discardableResult
    func post(_ path: String, _ fields: [(String, String)], csrf sendToken: Bool = true) async throws -> Page {
        var headers = HTTPHeaders()
        if let cookie { headers.replaceOrAdd(name: .cookie, value: "\(AdminSession.cookieName)=\(cookie)") }
        headers.contentType = .urlEncodedForm
        var pairs = fields
        if sendToken, let csrf { pairs.append(("csrf_token", csrf)) }
        let body = pairs.map { "\(QueryEncoding.encode($0.0))=\(QueryEncoding.encode($0.1))" }.joined(separator: "&")
        let response = try await app.testing().sendRequest(.POST, path, headers: headers, body: ByteBuffer(string: body))
        return remember(response)
    }

    /// Uploads a file as a browser's multipart form would, with the CSRF token unless `csrf` is false.
    @discardableResult
    func upload(_ path: String, file name: String, _ contents: String, csrf sendToken: Bool = true) async throws -> Page {
        try await upload(path, file: name, Data(contents.utf8), type: "text/csv", csrf: sendToken)
    }

    /// Uploads bytes (an image) as a multipart form's `file`.
    @discardableResult
    func upload(_ path: String, file name: String, _ contents: Data, type: String, csrf sendToken: Bool = true) async throws -> Page {
        var headers = HTTPHeaders()
        if let cookie { headers.replaceOrAdd(name: .cookie, value: "\(AdminSession.cookieName)=\(cookie)") }
        let boundary = "----storytime\(UUID().uuidString)"
        headers.replaceOrAdd(name: .contentType, value: "multipart/form-data; boundary=\(boundary)")
        var body = Data()
        if sendToken, let csrf { body += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"csrf_token\"\r\n\r\n\(csrf)\r\n".utf8) }
        body += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(name)\"\r\nContent-Type: \(type)\r\n\r\n".utf8)
        body += contents
        body += Data("\r\n--\(boundary)--\r\n".utf8)
        let response = try await app.testing().sendRequest(.POST, path, headers: headers, body: ByteBuffer(data: body))
        return remember(response)
    }

    private func remember(_ response: TestingHTTPResponse) -> Page {
        if let set = response.headers.setCookie?[AdminSession.cookieName] { cookie = set.string }
        let html = response.body.string
        if let range = html.range(of: #"name="csrf_token" value=""#) {
            csrf = String(html[range.upperBound...].prefix { $0 != "\"" })
        }
        return Page(status: response.status, headers: response.headers, html: html)
    }

    /// Signs in through the login form.
    func signIn(_ email: String, password: String = "staff password") async throws {
        try await get("/admin/login")
        let page = try await post("/admin/login", [("email", email), ("password", password)])
        guard page.status == .seeOther else { throw TestFailure("sign-in failed: \(page.status)") }
        try await get("/admin")
    }
}

enum QueryEncoding {
    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")) ?? text
    }
}

extension Application {
    /// A staff user (password "staff password") and a signed-in console client.
    func console(role: StaffRole = .editor, email: String? = nil) async throws -> ConsoleClient {
        let email = email ?? "\(role.rawValue)-\(UUID().uuidString.prefix(6))@storytime.test"
        _ = try await Accounts.createStaff(email: email, passwordHash: try "staff password".hashedForTests(), role: role, on: sql)
        let client = ConsoleClient(self)
        try await client.signIn(email)
        return client
    }

    func count(_ query: SQLQueryString) async throws -> Int {
        try await sql.raw(query).first()!.decode(column: "n", as: Int.self)
    }
}
