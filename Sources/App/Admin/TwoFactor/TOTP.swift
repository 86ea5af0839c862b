import Crypto
import Foundation
import Vapor

/// The staff's time-based one-time passwords: Vapor's `TOTP` and `HOTP` (RFC 6238 over RFC 4226)
/// with HMAC-SHA1, 6 digits and 30-second steps — what every authenticator app reads from an
/// `otpauth://` link — accepted one step either side of now, and the step a code belongs to, which
/// `TwoFactorStore` records so each code works once.
enum StaffTOTP {
    static let digits = OTPDigits.six
    static let period = 30
    /// Steps either side of now a code is accepted for (a phone's clock a little off).
    static let drift = 1

    static func step(at date: Date) -> Int64 { Int64((date.timeIntervalSince1970 / Double(period)).rounded(.down)) }

    /// The code of `step` under `secret` (a TOTP code is the HOTP of its step).
    static func code(secret: [UInt8], step: Int64) -> String {
        HOTP(key: SymmetricKey(data: secret), digest: .sha1, digits: digits).generate(counter: UInt64(bitPattern: step))
    }

    /// The step `code` belongs to, within `drift` of `date`; nil when it matches none. Every
    /// candidate is compared (constant work whatever the code).
    static func matchingStep(of code: String, secret: [UInt8], at date: Date) -> Int64? {
        let typed = Array(code.filter { !$0.isWhitespace }.utf8)
        guard typed.count == digits.rawValue, typed.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        // The codes of steps now - drift ... now + drift, in order.
        let candidates = TOTP(key: SymmetricKey(data: secret), digest: .sha1, digits: digits, interval: period).generate(time: date, range: drift)
        var found: Int64?
        for (offset, candidate) in candidates.enumerated() where Array(candidate.utf8).secureCompare(to: typed) {
            found = step(at: date) - Int64(drift) + Int64(offset)
        }
        return found
    }

    /// The `otpauth://` link an authenticator app scans.
    static func link(secret: [UInt8], account: String, issuer: String = "Storytime") -> String {
        let label = "\(issuer):\(account)".addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "@.-_:"))) ?? account
        return "otpauth://totp/\(label)?secret=\(Data(secret).base32EncodedString())&issuer=\(issuer)&algorithm=SHA1&digits=\(digits.rawValue)&period=\(period)"
    }
}

/// Who must enrol a second factor (`STAFF_2FA_REQUIRED`).
enum StaffTwoFactorRequirement: String, Sendable, CaseIterable {
    case admin, all, none

    func requires(_ role: StaffRole) -> Bool {
        switch self {
        case .all: return true
        case .admin: return role == .admin
        case .none: return false
        }
    }
}
