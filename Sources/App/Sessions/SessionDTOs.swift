import Foundation
import Vapor

/// A sign-in's answer (RFC 6749 §5.1's names): a short-lived access token and the device's
/// rotating refresh token. Never cached (`Cache-Control: no-store`).
struct TokenDTO: Content {
    let accessToken: String
    let refreshToken: String
    let tokenType: String
    let expiresIn: Int
    let deviceId: Int
    /// The child of a child device (child mode); null for a parent's sign-in.
    @ExplicitNull var childId: Int?
}

/// A signed-in device as the parent sees it.
struct DeviceDTO: Content {
    let id: Int
    let name: String
    /// The child a child device is paired to (child mode); null for a parent's device.
    @ExplicitNull var childId: Int?
    let createdAt: Date
    let lastUsedAt: Date
    /// The device this request comes from.
    let current: Bool
}
