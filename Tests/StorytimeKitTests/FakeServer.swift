import Foundation
import HTTPTypes
import OpenAPIRuntime
@testable import StorytimeKit

/// An in-memory transport playing the server for the client's logic: a catalog of titled books
/// (a book matches `q` when its title contains it), a library, sign-in, and answers a test can
/// hold back (`hold`/`release`) or make fail.
actor FakeServer: ClientTransport {
    private(set) var titles: [String]
    private(set) var library: Set<Int> = []
    /// Catalog requests as (q, page), in order.
    private(set) var catalogRequests: [(q: String?, page: Int)] = []
    private(set) var signIns = 0
    /// Tokens the server accepts; an empty set accepts none (everything is a 401 until renewed).
    var validTokens: Set<String> = []
    /// Library adds of these books fail with this status and code.
    var refusals: [Int: (status: Int, code: String)] = [:]
    private var held: [String: [CheckedContinuation<Void, Never>]] = [:]
    private var holding: Set<String> = []

    init(titles: [String]) { self.titles = titles }

    func hold(q: String) { holding.insert(q) }

    func release(q: String) {
        holding.remove(q)
        for waiter in held.removeValue(forKey: q) ?? [] { waiter.resume() }
    }

    func refuse(book: Int, status: Int, code: String) { refusals[book] = (status, code) }

    func expireTokens() { validTokens = [] }

    nonisolated var baseURL: URL { URL(string: "https://storytime.test")! }

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        let components = URLComponents(string: request.path ?? "")!
        let query = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        if operationID == "createToken" {
            signIns += 1
            let token = "token-\(signIns)"
            validTokens.insert(token)
            return json(200, #"{"access_token": "\#(token)", "refresh_token": "refresh-\#(signIns)", "token_type": "Bearer", "expires_in": 3600, "device_id": \#(signIns)}"#)
        }
        guard let header = request.headerFields[.authorization], validTokens.contains(String(header.dropFirst("Bearer ".count))) else {
            return problem(401, "unauthorized")
        }
        switch operationID {
        case "listBooks":
            let q = query["q"]
            let page = Int(query["page"] ?? "1") ?? 1
            catalogRequests.append((q, page))
            if holding.contains(q ?? "") {   // "" holds the requests without q
                await withCheckedContinuation { held[q ?? "", default: []].append($0) }
            }
            let perPage = Int(query["per_page"] ?? "20") ?? 20
            let matches = titles.indices.filter { q == nil || titles[$0].lowercased().contains(q!.lowercased()) }
            let shown = matches.dropFirst((page - 1) * perPage).prefix(perPage)
            let books = shown.map { Self.book(id: $0 + 1, title: titles[$0]) }.joined(separator: ",")
            return json(200, """
                {"data": [\(books)], "meta": {"page": \(page), "per_page": \(perPage), "total_count": \(matches.count),
                 "total_pages": \((matches.count + perPage - 1) / perPage), "facets": {"categories": [], "age_bands": []}}}
                """)
        case "addToLibrary":
            let data = try await Data(collecting: body!, upTo: 1024)
            let bookID = (try JSONSerialization.jsonObject(with: data) as! [String: Any])["book_id"] as! Int
            if let refusal = refusals[bookID] { return problem(refusal.status, refusal.code) }
            guard library.insert(bookID).inserted else { return problem(409, "duplicate") }
            return json(201, #"{"data": \#(Self.entry(id: bookID))}"#)
        case "removeFromLibrary":
            let bookID = Int(components.path.split(separator: "/").last!)!
            guard library.remove(bookID) != nil else { return problem(404, "not_found") }
            return (HTTPResponse(status: .noContent), nil)
        case "listLibrary":
            let ids = library.sorted()
            return json(200, """
                {"data": [\(ids.map(Self.entry(id:)).joined(separator: ","))],
                 "meta": {"page": 1, "per_page": 100, "total_count": \(ids.count), "total_pages": 1}}
                """)
        default:
            return problem(404, "not_found")
        }
    }

    static func book(id: Int, title: String) -> String {
        """
        {"id": \(id), "title": "\(title)", "author": "Ann", "description": "", "age_min": 2, "age_max": 6, "language": "en",
         "cover_image_url": null, "publisher": null, "categories": [], "status": "active", "duration_seconds": 330,
         "has_captions": true, "rights_available": true}
        """
    }

    static func entry(id: Int) -> String {
        String(book(id: id, title: "Book \(id)").dropLast()) + """
        , "added_at": "2026-11-23T08:00:00Z", "last_played_at": null, "progress": null, "completed_count": 0, "rights_ends_at": null,
          "playable": {"ok": true, "reason": null}}
        """
    }

    private func json(_ status: Int, _ text: String) -> (HTTPResponse, HTTPBody?) {
        var response = HTTPResponse(status: .init(code: status))
        response.headerFields[.contentType] = "application/json"
        return (response, HTTPBody(text))
    }

    private func problem(_ status: Int, _ code: String) -> (HTTPResponse, HTTPBody?) {
        var response = HTTPResponse(status: .init(code: status))
        response.headerFields[.contentType] = "application/problem+json"
        if status == 429 { response.headerFields[.retryAfter] = "30" }
        return (response, HTTPBody(#"{"type": "about:blank", "title": "x", "status": \#(status), "detail": "\#(code) here", "code": "\#(code)"}"#))
    }
}
