import Foundation
import Vapor

/// `PUT`/`DELETE /api/v1/me/pin`: a parent of the family sets or removes the PIN of the parent
/// gate (`ChildMode/ParentGateRoutes.swift` unlocks with it), confirming with the account password.
struct MePINRoutes: APIRouteCollection {
    func boot(api: APIRoutes) throws {
        api.familyParent.on(.PUT, "me", "pin", body: .collect(maxSize: "16kb"), use: setPIN)
        api.familyParent.on(.DELETE, "me", "pin", body: .collect(maxSize: "16kb"), use: removePIN)
    }

    @Sendable
    func setPIN(req: Request) async throws -> HTTPStatus {
        let body = try JSONBody(req)
        let pin = try body.string("pin", maxLength: 6)
        guard (4...6).contains(pin.utf8.count), pin.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw Problem.invalidParameter("pin", "pin must be 4 to 6 digits, as a string (\"0428\")")
        }
        let password = try body.string("password", maxLength: 1000)
        let parent = try req.parentID
        try await ParentPassword.requireCurrent(password, parent: parent, req: req)
        let hash = try await req.password.async.hash(pin)
        try await req.transaction { sql in try await ParentGateQueries.setPIN(hash, parent: parent, on: sql) }
        return .noContent
    }

    @Sendable
    func removePIN(req: Request) async throws -> HTTPStatus {
        let password = try JSONBody(req).string("password", maxLength: 1000)
        let parent = try req.parentID
        try await ParentPassword.requireCurrent(password, parent: parent, req: req)
        try await req.transaction { sql in try await ParentGateQueries.setPIN(nil, parent: parent, on: sql) }
        return .noContent
    }
}
