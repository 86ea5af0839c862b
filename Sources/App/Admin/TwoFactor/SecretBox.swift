import Crypto
import Foundation

/// Seals small secrets kept in the database (a staff member's TOTP secret) with AES-GCM under a
/// key derived with HKDF-SHA256 from `STAFF_2FA_KEY`: a copy of the database alone cannot mint
/// codes, and rotating `SESSION_SECRET` leaves second factors alone (`staff reseal-2fa` rotates this one).
struct SecretBox: Sendable {
    /// HKDF's info: the sealing key is used for nothing else, whatever else STAFF_2FA_KEY keyed.
    static let label = "storytime staff totp secret v1"

    private let key: SymmetricKey

    /// The box of `STAFF_2FA_KEY` (or of an old value of it).
    init(staffKey: String) {
        key = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: Data(staffKey.utf8)), info: Data(Self.label.utf8), outputByteCount: 32)
    }

    private init(key: SymmetricKey) { self.key = key }

    /// The box before `STAFF_2FA_KEY` existed: SHA-256 of a label and `SESSION_SECRET`. Enrolments
    /// from then are opened with it and sealed again under the current box (`StaffSecretKeys`).
    static func legacy(sessionSecret: String) -> SecretBox {
        SecretBox(key: SymmetricKey(data: SHA256.hash(data: Data(("storytime totp\u{0}" + sessionSecret).utf8))))
    }

    func seal(_ bytes: [UInt8]) throws -> String {
        guard let combined = try AES.GCM.seal(bytes, using: key).combined else { throw SealError() }
        return combined.base64EncodedString()
    }

    func open(_ text: String) -> [UInt8]? {
        guard let data = Data(base64Encoded: text), let box = try? AES.GCM.SealedBox(combined: data),
              let bytes = try? AES.GCM.open(box, using: key) else { return nil }
        return Array(bytes)
    }

    struct SealError: Error {}
}

/// The boxes a stored TOTP secret may be under: the current one (`STAFF_2FA_KEY`), or — enrolled
/// before that key existed — the legacy one of `SESSION_SECRET`. A secret that opens only under the
/// legacy box comes back with its sealing under the current one, which its next successful use stores.
struct StaffSecretKeys: Sendable {
    let current: SecretBox
    let legacy: SecretBox

    init(_ settings: Settings) {
        current = SecretBox(staffKey: settings.staffTwoFactorKey)
        legacy = .legacy(sessionSecret: settings.sessionSecret)
    }

    struct Opened {
        let secret: [UInt8]
        /// The secret sealed under the current box, when it was under the legacy one.
        let resealed: String?
    }

    func open(_ sealed: String) throws -> Opened? {
        if let secret = current.open(sealed) { return Opened(secret: secret, resealed: nil) }
        guard let secret = legacy.open(sealed) else { return nil }
        return Opened(secret: secret, resealed: try current.seal(secret))
    }
}
