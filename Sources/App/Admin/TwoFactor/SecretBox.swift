import Crypto
import Foundation

/// Seals small secrets kept in the database (a staff member's TOTP secret) with AES-GCM under a
/// key derived from SESSION_SECRET: a copy of the database alone cannot mint codes.
struct SecretBox: Sendable {
    private let key: SymmetricKey

    init(sessionSecret: String) {
        key = SymmetricKey(data: SHA256.hash(data: Data(("storytime totp\u{0}" + sessionSecret).utf8)))
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
