import Foundation
import HTTPTypes
import OpenAPIRuntime

/// The token and the credentials that renew it.
actor Session {
    struct Credentials: Sendable { let email: String; let password: String }
    private(set) var token: String?
    /// The device's single-use refresh token: a 401 renews the pair with it first.
    private(set) var refreshToken: String?
    private(set) var credentials: Credentials?

    func signedIn(token: String, refreshToken: String, email: String, password: String) {
        self.token = token
        self.refreshToken = refreshToken
        credentials = Credentials(email: email, password: password)
    }

    /// A child device's tokens (child mode): renewed with the refresh token only.
    func paired(token: String, refreshToken: String) {
        self.token = token
        self.refreshToken = refreshToken
        credentials = nil
    }

    func renewed(token: String, refreshToken: String) {
        self.token = token
        self.refreshToken = refreshToken
    }

    func signOut() {
        token = nil
        refreshToken = nil
        credentials = nil
    }
}

/// Sends the session's token with every operation but sign-in.
struct BearerMiddleware: ClientMiddleware {
    let session: Session

    func intercept(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
                   next: (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if operationID != "createToken", operationID != "refreshToken", let token = await session.token {
            request.headerFields[.authorization] = "Bearer \(token)"
        }
        return try await next(request, body, baseURL)
    }
}
