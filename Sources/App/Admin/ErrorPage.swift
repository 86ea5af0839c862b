import Vapor

/// The console's error page (`templates/error.leaf`), for every error outside /api. The problem
/// middleware is handed this function by `configure`, so the API knows nothing of the console.
enum ErrorPage {
    struct Context: Encodable {
        let code: UInt
        let title: String
        let detail: String
        let stylesheet = AdminPath.stylesheet
        let home = AdminPath.dashboard
    }

    @Sendable
    static func response(for problem: Problem, request: Request) async -> Response {
        var headers = problem.headers
        headers.replaceOrAdd(name: .contentType, value: "text/html; charset=utf-8")
        let context = Context(code: problem.status.code, title: problem.status.reasonPhrase, detail: problem.detail)
        guard let view = try? await request.view.render("error", context) else {
            // The template cannot be read: the same words as plain text, never a second error.
            headers.replaceOrAdd(name: .contentType, value: "text/plain; charset=utf-8")
            return Response(status: problem.status, headers: headers, body: .init(string: "\(context.code) \(context.title)\n\(context.detail)\n"))
        }
        return Response(status: problem.status, headers: headers, body: .init(buffer: view.data))
    }
}
