import Foundation
import Vapor

/// Serves `public/` (the console's CSS and script, `openapi.json`) with Vapor's `FileMiddleware`,
/// but only for paths whose first segment names something in `public/` at start-up. Every other
/// request (the whole API and console) passes straight through, without the file-system lookup
/// on a thread pool that `FileMiddleware` costs each request it sees.
struct PublicFilesMiddleware: Middleware {
    private let files: FileMiddleware
    private let topLevel: Set<String>

    init(directory: String) {
        files = FileMiddleware(publicDirectory: directory)
        topLevel = Set((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
    }

    func respond(to request: Request, chainingTo next: any Responder) -> EventLoopFuture<Response> {
        let first = request.encodedPath.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: true).first
        guard let first, topLevel.contains(String(first)) || topLevel.contains(String(first).removingPercentEncoding ?? "") else {
            return next.respond(to: request)
        }
        return files.respond(to: request, chainingTo: next)
    }
}
