import Vapor

/// A short HTML error page for the console and everything outside /api.
enum ErrorPage {
    static func response(for problem: Problem, request: Request) async -> Response {
        let title = problem.status.reasonPhrase
        let html = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>\(problem.status.code) \(title.escapedHTML())</title>
            <link rel="stylesheet" href="\(AdminPath.stylesheet)"></head><body><main class="error-page">
            <h1>\(problem.status.code) \(title.escapedHTML())</h1><p>\(problem.detail.escapedHTML())</p>
            <p><a href="\(AdminPath.dashboard)">Back to the console</a></p></main></body></html>
            """
        var headers = problem.headers
        headers.replaceOrAdd(name: .contentType, value: "text/html; charset=utf-8")
        return Response(status: problem.status, headers: headers, body: .init(string: html))
    }
}

extension String {
    func escapedHTML() -> String {
        var out = ""
        out.reserveCapacity(count)
        for c in self {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }
}
