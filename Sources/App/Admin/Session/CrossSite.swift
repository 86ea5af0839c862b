import Vapor

/// A browser's word on where a request comes from, read from headers alone — so a form whose body
/// is large (an upload) can be refused before its body, where the CSRF token is, is read.
enum CrossSite {
    /// True when the browser says the request was sent by another site: `Sec-Fetch-Site` other than
    /// same-origin or none (typed by the user), or an `Origin` whose host is not this request's
    /// `Host`. A client that sends neither (curl, tests) is left to the token.
    static func isCrossSite(_ req: Request) -> Bool {
        if let site = req.headers.first(name: "Sec-Fetch-Site")?.lowercased(), site != "same-origin", site != "none" { return true }
        guard let origin = req.headers.first(name: .origin) else { return false }
        guard let host = req.headers.first(name: .host), let url = URL(string: origin), let originHost = url.host else { return true }
        let authority = url.port.map { "\(originHost):\($0)" } ?? originHost
        return authority.lowercased() != host.lowercased()
    }
}
