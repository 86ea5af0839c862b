import JWT
import SQLKit
import Vapor

/// Signing in and out, by device: `POST /auth/token` (throttled, `LoginThrottle`), `/auth/refresh`,
/// `/auth/logout` (the account's devices, `/me/devices`, are `Accounts/MeDevicesRoutes.swift`).
struct SessionRoutes: APIRouteCollection {
    func boot(api: APIRoutes) throws {
        let auth = api.anyone.grouped("auth")
        auth.on(.POST, "token", body: .collect(maxSize: "16kb"), use: token)
        auth.on(.POST, "refresh", body: .collect(maxSize: "16kb"), use: refresh)
        let signedIn = api.parent
        signedIn.post("auth", "logout", use: logout)
    }

    static let defaultDeviceName = "Unnamed device"

    @Sendable
    func token(req: Request) async throws -> Response {
        let body = try JSONBody(req)
        let email = try body.string("email", maxLength: 320).trimmingCharacters(in: .whitespaces)
        let password = try body.string("password", maxLength: 1000)
        let name = try Self.deviceName(body)
        let parent = try await ParentPassword.verifySignIn(email: email, password: password, req: req)
        let (device, refresh) = try await req.transaction { sql in try await SessionQueries.createDevice(parent: parent, name: name, on: sql) }
        return try await Self.answer(parent: parent, device: device, refresh: refresh, req: req)
    }

    @Sendable
    func refresh(req: Request) async throws -> Response {
        let secret = try JSONBody(req).string("refresh_token", maxLength: 200)
        let rotation = try await req.transaction { sql in try await SessionQueries.rotate(secret, on: sql) }
        switch rotation {
        case .rotated(let parent, let device, let child, let refresh):
            return try await Self.answer(parent: parent, device: device, child: child, refresh: refresh, req: req)
        case .reused(let device):
            req.logger.warning("refresh token reused: its device was signed out", metadata: ["device": .stringConvertible(device)])
            req.appServices.revokedSessions.note([device])
            throw Problem.invalidBodyToken
        case .unknown:
            throw Problem.invalidBodyToken
        }
    }

    @Sendable
    func logout(req: Request) async throws -> HTTPStatus {
        if let device = req.deviceID {
            try await Self.revoke(device: device, parent: try req.parentID, req: req)
        }
        return .noContent
    }

    /// Signs out `parent`'s `device`, known here at once and elsewhere within a second.
    @discardableResult
    static func revoke(device: Int, parent: Int, req: Request) async throws -> [Int] {
        let ids = try await req.transaction { sql in try await SessionQueries.revoke(device: device, parent: parent, on: sql) }
        req.appServices.revokedSessions.note(ids)
        return ids
    }

    static func deviceName(_ body: JSONBody, field: String = "device_name") throws -> String {
        guard let name = try body.optionalString(field, maxLength: 100)?.trimmingCharacters(in: .whitespacesAndNewlines) else {
            return defaultDeviceName
        }
        guard !name.isEmpty, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw Problem.invalidParameter(field, "\(field) must be 1 to 100 printable characters")
        }
        return name
    }

    /// The token answer for `device` (a child device's when `child` is set), uncacheable.
    static func answer(parent: Int, device: Int, child: Int? = nil, refresh: String, status: HTTPStatus = .ok,
                       req: Request) async throws -> Response {
        try Response.noStore(status: status, try await tokens(parent: parent, device: device, child: child, refresh: refresh, req: req))
    }

    static func tokens(parent: Int, device: Int, child: Int?, refresh: String, req: Request) async throws -> TokenDTO {
        let lifetime = req.application.settings.tokenLifetime
        let payload = ParentToken(parent: parent, device: device, child: child, lifetime: lifetime, now: req.now)
        return TokenDTO(accessToken: try await req.jwt.sign(payload), refreshToken: refresh, tokenType: "Bearer",
                        expiresIn: Int(lifetime), deviceId: device, childId: child)
    }
}
