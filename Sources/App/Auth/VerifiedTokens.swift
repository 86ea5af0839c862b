import Foundation
import NIOConcurrencyHelpers
import Vapor

/// Parent tokens whose signature and audience this instance has verified, by their exact text.
///
/// A token is immutable and signed, so the same string verifies the same way every time; only
/// its expiry and not-before depend on the clock, and those are checked on every use. A forged
/// or altered token is a different string and goes through full verification. Bounded: past
/// `limit` entries the cache starts over.
final class VerifiedTokens: Sendable {
    static let limit = 20_000
    private let tokens = NIOLockedValueBox([String: ParentToken]())

    /// The token if `text` was verified before and is still within its validity period.
    func token(_ text: String, at now: Date) -> ParentToken? {
        guard let token = tokens.withLockedValue({ $0[text] }) else { return nil }
        guard (try? token.verifyTimes(at: now)) != nil else {
            tokens.withLockedValue { _ = $0.removeValue(forKey: text) }
            return nil
        }
        return token
    }

    func remember(_ token: ParentToken, for text: String) {
        tokens.withLockedValue { tokens in
            if tokens.count >= Self.limit { tokens.removeAll(keepingCapacity: true) }
            tokens[text] = token
        }
    }
}

