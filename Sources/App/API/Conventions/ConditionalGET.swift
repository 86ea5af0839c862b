import Vapor

/// Conditional requests on the parent API: every `GET` of `/api/v1` answered 200 from memory
/// (catalog lists and detail, library, continue watching, history, today, the account…) gets a
/// strong `ETag`, `Cache-Control: private, no-cache` (a client keeps it and asks again) and
/// `Vary: Authorization`; a matching `If-None-Match` is 304 without the body. Answers that must
/// not be kept (`no-store`: tokens, exports) and those with their own ETag (categories) are left
/// as they are.
struct ConditionalGETMiddleware: Middleware {
    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        guard request.method == .GET || request.method == .HEAD, request.isParentAPI else {
            return next.respond(to: request)
        }
        return next.respond(to: request).map { response in
            guard response.status == .ok, let body = response.body.buffer,
                  response.headers.first(name: .cacheControl)?.contains("no-store") != true else { return response }
            let etag: String
            if let own = response.headers.first(name: .eTag) {
                etag = own
            } else {
                etag = EntityTag.strong(for: body, language: response.headers.first(name: .contentLanguage))
                response.headers.replaceOrAdd(name: .eTag, value: etag)
                response.headers.replaceOrAdd(name: .cacheControl, value: "private, no-cache")
                response.headers.add(name: .vary, value: "Authorization")
            }
            // The 304 names the representation the client holds (its tag, coding suffix and all).
            guard let held = EntityTag.held(request.headers.first(name: .ifNoneMatch), etag) else { return response }
            var headers = response.headers
            headers.remove(name: .contentType)
            headers.remove(name: .contentLength)
            headers.replaceOrAdd(name: .eTag, value: held)
            return Response(status: .notModified, headers: headers)
        }
    }
}
