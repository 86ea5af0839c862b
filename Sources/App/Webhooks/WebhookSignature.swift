import Crypto
import Foundation

/// Signatures of the Standard Webhooks specification (standardwebhooks.com), used by the video
/// pipeline's events: `webhook-signature` holds space-separated `v1,<base64 HMAC-SHA256>` of
/// `<webhook-id>.<webhook-timestamp>.<body>` under the shared secret.
enum WebhookSignature {
    /// How far a `webhook-timestamp` may be from now, either way, before the event is refused.
    static let tolerance: TimeInterval = 300

    /// The HMAC key of `secret`: `whsec_` + base64 (the specification's form, ≥ 24 bytes), or
    /// else the text's own bytes (≥ 32). Nil: too short to be a key.
    static func key(secret: String) -> SymmetricKey? {
        if secret.hasPrefix("whsec_") {
            guard let bytes = Data(base64Encoded: String(secret.dropFirst(6))), bytes.count >= 24 else { return nil }
            return SymmetricKey(data: bytes)
        }
        guard secret.utf8.count >= 32 else { return nil }
        return SymmetricKey(data: Data(secret.utf8))
    }

    /// The `webhook-signature` value for one event.
    static func sign(id: String, timestamp: Int, body: some DataProtocol, key: SymmetricKey) -> String {
        "v1," + Data(mac(id: id, timestamp: timestamp, body: body, key: key)).base64EncodedString()
    }

    private static func mac(id: String, timestamp: Int, body: some DataProtocol, key: SymmetricKey) -> HashedAuthenticationCode<SHA256> {
        var hmac = HMAC<SHA256>(key: key)
        hmac.update(data: Data("\(id).\(timestamp).".utf8))
        hmac.update(data: Data(body))
        return hmac.finalize()
    }

    enum Failure: Error, Equatable {
        case missingHeaders, badTimestamp, stale, badSignature
    }

    /// Checks the three headers against `body`; a signature list may hold several (key rotation):
    /// one `v1` that matches is enough. Compared in constant time; the timestamp against `now`.
    static func verify(id: String?, timestamp: String?, signatures: String?, body: some DataProtocol,
                       key: SymmetricKey, now: Date) throws(Failure) {
        guard let id, !id.isEmpty, id.utf8.count <= 200, let timestamp, let signatures else { throw .missingHeaders }
        guard let seconds = Int(timestamp) else { throw .badTimestamp }
        guard abs(now.timeIntervalSince1970 - TimeInterval(seconds)) <= tolerance else { throw .stale }
        let expected = mac(id: id, timestamp: seconds, body: body, key: key)
        for candidate in signatures.split(separator: " ") {
            let parts = candidate.split(separator: ",", maxSplits: 1)
            guard parts.count == 2, parts[0] == "v1", let given = Data(base64Encoded: String(parts[1])) else { continue }
            if expected == given { return }
        }
        throw .badSignature
    }
}
