import Foundation
import Vapor

/// The parent gate of child mode: `POST /api/v1/auth/pin` (a child device): the PIN (set by a
/// parent with `PUT /api/v1/me/pin`, `Accounts/MePINRoutes.swift`) — or the account password —
/// for a five-minute parent token on the same device. Wrong PINs are counted per account, for all
/// the family's devices: the fifth in a row locks the PIN for 15 minutes, recorded in the
/// parent's audit log (`pin.locked`).
struct ParentGateRoutes: APIRouteCollection {
    static let gateLifetime: TimeInterval = 5 * 60

    func boot(api: APIRoutes) throws {
        api.parentOrChildDevice.on(.POST, "auth", "pin", body: .collect(maxSize: "16kb"), use: unlock)
    }

    /// A parent token for a few minutes, without a refresh token.
    struct GateTokenDTO: Content {
        let accessToken: String
        let tokenType: String
        let expiresIn: Int
        @ExplicitNull var deviceId: Int?
    }

    /// `{pin}` or `{password}`: the parent's, for a parent token on this device.
    @Sendable
    func unlock(req: Request) async throws -> Response {
        let body = try JSONBody(req)
        let parent = try req.parentID
        if body.has("password") {
            try await ParentPassword.requireCurrent(try body.string("password", maxLength: 1000), parent: parent, req: req)
        } else {
            try await Self.requirePIN(try body.string("pin", maxLength: 6), parent: parent, req: req)
        }
        let token = ParentToken(parent: parent, device: req.deviceID, child: nil, lifetime: Self.gateLifetime, now: req.now)
        return try Response.noStore(GateTokenDTO(accessToken: try await req.jwt.sign(token), tokenType: "Bearer",
                                                 expiresIn: Int(Self.gateLifetime), deviceId: req.deviceID))
    }

    private static func requirePIN(_ pin: String, parent: Int, req: Request) async throws {
        let attempt = try await ParentGateQueries.reserveAttempt(parent: parent, on: req.sql)
        if let wait = attempt.lockedFor ?? (attempt.attempts > ParentGateQueries.attemptsBeforeLock ? 1 : nil) {
            throw locked(wait)
        }
        guard let hash = attempt.hash else {
            throw Problem(status: .conflict, code: "pin_not_set", detail: "No parent PIN is set: the parent sets one in the app (PUT /api/v1/me/pin).")
        }
        if (try? await req.password.async.verify(pin, created: hash)) == true {
            try await ParentGateQueries.succeeded(parent: parent, on: req.sql)
            return
        }
        let left = ParentGateQueries.attemptsBeforeLock - attempt.attempts
        guard left > 0 else {
            let seconds = try await ParentGateQueries.lock(parent: parent, device: req.deviceID, on: req.sql)
            throw locked(seconds)
        }
        throw Problem(status: .forbidden, code: "wrong_pin", detail: "The PIN is wrong; \(left) more tries before it is locked for 15 minutes.",
                      field: "pin")
    }

    private static func locked(_ seconds: Int) -> Problem {
        Problem(status: .tooManyRequests, code: "pin_locked",
                detail: "Too many wrong PINs: the PIN is locked for \((seconds + 59) / 60) minutes. The account password still works.",
                headers: ["Retry-After": String(max(1, seconds))])
    }
}
