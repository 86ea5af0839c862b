import Foundation
import JWT
import Vapor

/// The parent's bearer token: an HS256 JWT naming the parent, with an expiry.
struct ParentToken: JWTPayload, Authenticatable {
    var sub: SubjectClaim
    var exp: ExpirationClaim
    var iat: IssuedAtClaim
    /// Not before; optional so tokens issued before it existed stay valid until they expire.
    var nbf: NotBeforeClaim?
    var aud: AudienceClaim
    /// The signed-in device (`parent_devices.id`); absent in tokens issued before devices existed,
    /// which stay valid until they expire.
    var sid: String?
    /// The child of a child device (child mode): the token reaches only what that child may do.
    var cid: String?

    static let audience = "storytime-parent-api"
    /// The only algorithm accepted: jwt-kit verifies with our HMAC key whatever the header says,
    /// so the header is checked here (no `none`, no algorithm confusion).
    static let algorithm = "HS256"
    /// Clock difference tolerated between instances for `nbf`.
    static let clockSkew: TimeInterval = 30

    var parentID: Int? { Int(sub.value) }
    var deviceID: Int? { sid.flatMap { Int($0) } }
    var childID: Int? { cid.flatMap { Int($0) } }


    /// The audience only: the clock claims are checked against the app's clock by the caller
    /// (`verify(_:request:)`, `VerifiedTokens`), as `verifyTimes(at:)`.
    func verify(using algorithm: some JWTAlgorithm) async throws {
        try aud.verifyIntendedAudience(includes: Self.audience)
    }

    /// The claims that change with the clock: checked on every use, cached or not.
    func verifyTimes(at now: Date) throws {
        try exp.verifyNotExpired(currentDate: now)
        try nbf?.verifyNotBefore(currentDate: now.addingTimeInterval(Self.clockSkew))
    }

    /// Whether the token's header names exactly our algorithm.
    static func hasExpectedHeader(_ token: String) -> Bool {
        guard let segment = token.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).first,
              let data = Data(base64URLEncoded: String(segment)),
              let header = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return false }
        return header["alg"] as? String == algorithm && (header["typ"] == nil || header["typ"] as? String == "JWT")
    }
}

extension ParentToken {
    /// `bearer` as a token of ours (our algorithm, signature, clock claims, a parent), remembered
    /// in `VerifiedTokens` so the next request with it skips the signature; nil when it is not.
    /// Whether its device is still signed in is the caller's to check.
    static func verify(_ bearer: String, request: Request) async -> ParentToken? {
        let services = request.application.appServices
        let verified = services.verifiedTokens
        if let token = verified.token(bearer, at: services.clock.now()) { return token }
        guard hasExpectedHeader(bearer), let token = try? await request.jwt.verify(bearer, as: ParentToken.self),
              (try? token.verifyTimes(at: services.clock.now())) != nil, token.parentID != nil else { return nil }
        verified.remember(token, for: bearer)
        return token
    }

    /// A token for `parent` on `device` (for the child `child` on a child device), valid `lifetime`.
    init(parent: Int, device: Int?, child: Int?, lifetime: TimeInterval, now: Date) {
        sub = .init(value: String(parent))
        exp = .init(value: now.addingTimeInterval(lifetime))
        iat = .init(value: now)
        nbf = .init(value: now.addingTimeInterval(-Self.clockSkew))
        aud = .init(value: [Self.audience])
        sid = device.map(String.init)
        cid = child.map(String.init)
    }
}

extension HTTPHeaders {
    /// The token of `Authorization: Bearer <token>`, by Vapor's rule (exactly two space-separated
    /// parts, the scheme in any case), read from the bytes: `bearerAuthorization` indexes the
    /// String character by character, a measurable share of a cached catalog request.
    var bearerToken: String? {
        guard let value = first(name: .authorization) else { return nil }
        let parts = value.utf8.split(separator: UInt8(ascii: " "))
        guard parts.count == 2, parts[0].count == 6,
              zip(parts[0], "bearer".utf8).allSatisfy({ $0 | 0x20 == $1 }) else { return nil }
        return String(Substring(parts[1]))
    }
}

extension Request {
    /// The signed-in parent's id (behind `ParentAuthMiddleware`).
    var parentID: Int {
        get throws {
            guard let id = auth.get(ParentToken.self)?.parentID else { throw Problem.unauthorized }
            return id
        }
    }
}

extension Data {
    /// base64url without padding (RFC 7515 §2).
    init?(base64URLEncoded text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        self.init(base64Encoded: base64)
    }
}

extension Request {
    /// The signed-in device of this request's token (nil for a token from before devices).
    var deviceID: Int? { auth.get(ParentToken.self)?.deviceID }

    /// The child of a child device's token (child mode); nil for a parent.
    var childDeviceChild: Int? { auth.get(ParentToken.self)?.childID }
}
