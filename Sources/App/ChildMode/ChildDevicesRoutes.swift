import Foundation
import Vapor

/// `POST /api/v1/children/:child_id/devices` (parent): pairs a device to the child. Its tokens
/// name the child (`cid`): refreshable like a parent's, listed and signed out with the parent's
/// devices (`/me/devices`), and valid only for what the child may do (`ChildRoutes.family`, the
/// catalog as that child).
struct ChildDevicesRoutes: ChildRouteCollection {
    func boot(child: ChildRoutes) throws {
        child.parent.on(.POST, "devices", body: .collect(maxSize: "16kb"), use: pair)
    }

    /// The paired device and its first tokens (shown once; `Cache-Control: no-store`).
    struct PairingDTO: Content {
        let device: DeviceDTO
        let accessToken: String
        let refreshToken: String
        let tokenType: String
        let expiresIn: Int
        let childId: Int
    }

    @Sendable
    func pair(req: Request) async throws -> Response {
        let child = try req.child.id
        let parent = try req.parentID
        let name = try SessionRoutes.deviceName(try JSONBody(req), field: "name")
        let (device, refresh) = try await req.transaction { sql in
            try await SessionQueries.createDevice(parent: parent, child: child, name: name, on: sql)
        }
        let tokens = try await SessionRoutes.tokens(parent: parent, device: device, child: child, refresh: refresh, req: req)
        let now = req.now
        return try Response.noStore(status: .created, ItemDTO(data: PairingDTO(
            device: DeviceDTO(id: device, name: name, childId: child, createdAt: now, lastUsedAt: now, current: false),
            accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, tokenType: tokens.tokenType,
            expiresIn: tokens.expiresIn, childId: child)))
    }
}
