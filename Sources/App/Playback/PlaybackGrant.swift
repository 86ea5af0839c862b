import Foundation
import JWT
import Vapor

/// A playback grant's token: an HS256 JWT under `PLAYBACK_SIGNING_KEY` that the video CDN checks
/// before it serves an asset's stream. It names the asset, the book and the child, and expires at
/// the earliest moment the child may no longer be watching (`PlaybackGrants.expiry`).
struct PlaybackGrant: JWTPayload, Equatable {
    /// The asset (`video_assets.id`) the token opens.
    var sub: SubjectClaim
    var aud: AudienceClaim
    var exp: ExpirationClaim
    var iat: IssuedAtClaim
    /// A unique id, so a CDN can log (or refuse a replay of) one grant.
    var jti: IDClaim
    /// The book and the child watching it.
    var book: Int
    var child: Int

    static let audience = "storytime-playback"

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
        try aud.verifyIntendedAudience(includes: Self.audience)
    }
}

/// The key grants are signed with: its own collection, so no parent token verifies under it and no
/// grant verifies as a parent token.
struct PlaybackKeys: Sendable {
    let keys: JWTKeyCollection

    static func make(secret: String) async -> PlaybackKeys {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return PlaybackKeys(keys: keys)
    }
}

extension Application {
    private struct PlaybackKeysKey: StorageKey { typealias Value = PlaybackKeys }

    var playbackKeys: PlaybackKeys {
        get {
            guard let keys = storage[PlaybackKeysKey.self] else { fatalError("configure(_:) has not run") }
            return keys
        }
        set { storage[PlaybackKeysKey.self] = newValue }
    }
}
