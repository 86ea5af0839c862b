import Vapor

/// The signed-in account's devices, `/api/v1/me/devices`: the list (which one is this), signing
/// one out, and signing every one out (this one too, and any pending address change ends).
/// Signing in and out is `Sessions/SessionRoutes.swift`'s.
struct MeDevicesRoutes: APIRouteCollection {
    func boot(api: APIRoutes) throws {
        let devices = api.parent.grouped("me", "devices")
        devices.get(use: list)
        devices.delete(":device_id", use: signOut)
        devices.delete(use: signOutAll)
    }

    @Sendable
    func list(req: Request) async throws -> ItemDTO<[DeviceDTO]> {
        let current = req.deviceID
        return ItemDTO(data: try await SessionQueries.devices(of: try req.parentID, on: req.sql).map {
            DeviceDTO(id: $0.id, name: $0.name, childId: $0.childId, createdAt: $0.createdAt, lastUsedAt: $0.lastUsedAt, current: $0.id == current)
        })
    }

    @Sendable
    func signOut(req: Request) async throws -> HTTPStatus {
        let device = try req.pathID("device_id", missing: "No such device.")
        guard try await !SessionRoutes.revoke(device: device, parent: try req.parentID, req: req).isEmpty else {
            throw Problem.notFound("No such device.")
        }
        return .noContent
    }

    /// Signs every device of the account out, this one included, and ends any pending address
    /// change in the same transaction (`AccountQueries.endPendingChanges`).
    @Sendable
    func signOutAll(req: Request) async throws -> HTTPStatus {
        let parent = try req.parentID
        let ids = try await req.transaction { sql in
            try await AccountQueries.endPendingChanges(parents: [parent], on: sql)
            return try await SessionQueries.revokeAll(parent: parent, on: sql)
        }
        req.appServices.revokedSessions.note(ids)
        return .noContent
    }
}
