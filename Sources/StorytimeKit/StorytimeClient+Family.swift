import Foundation
import OpenAPIRuntime

/// The family's own account: devices, the password, and children.
extension StorytimeClient {
    // MARK: Devices

    /// The account's signed-in devices (`current` is this one).
    public func devices() async throws -> [Device] {
        try await authorized { try await $0.listDevices().ok.body.json.data }
    }

    /// Signs another device out (a lost tablet): its tokens stop working on every server within a second.
    public func signOut(deviceID: Int) async throws {
        _ = try await authorized { try await $0.signOutDevice(path: .init(deviceId: deviceID)).noContent }
    }

    /// Signs every device of the account out, this one included, and forgets the tokens here.
    public func signOutEverywhere() async throws {
        _ = try await authorized { try await $0.signOutAllDevices().noContent }
        await signOut()
    }

    /// Ends this device's session on the server, then forgets it here.
    public func logOut() async throws {
        _ = try await authorized { try await $0.logout().noContent }
        await signOut()
    }

    /// Changes the password; every other device is signed out. `weak_password` (422) names
    /// `new_password`; a wrong current one is `forbidden` (`wrong_password`).
    public func changePassword(current: String, new: String) async throws {
        _ = try await authorized {
            try await $0.changePassword(body: .json(.init(currentPassword: current, newPassword: new))).noContent
        }
    }

    // MARK: Children

    @discardableResult
    public func addChild(name: String, birthYear: Int? = nil, avatar: String? = nil) async throws -> Child {
        try await authorized {
            try await $0.addChild(body: .json(.init(name: name, birthYear: birthYear, avatar: avatar))).created.body.json.data
        }
    }

    /// Renames a child (other fields keep their values).
    @discardableResult
    public func renameChild(_ childID: Int, to name: String) async throws -> Child {
        try await authorized {
            try await $0.updateChild(path: .init(childId: childID), body: .json(.init(name: name))).ok.body.json.data
        }
    }

    /// Removes a child with everything kept about it; the receipt counts what went.
    @discardableResult
    public func removeChild(_ childID: Int) async throws -> ChildRemoval {
        try await authorized { try await $0.removeChild(path: .init(childId: childID)).ok.body.json.data }
    }
}
