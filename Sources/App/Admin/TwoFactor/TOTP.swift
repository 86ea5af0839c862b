import Crypto
import Foundation

/// Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP): HMAC-SHA1, 6 digits, 30-second
/// steps — what every authenticator app reads from an `otpauth://` link.
enum TOTP {
    static let digits = 6
    static let period: TimeInterval = 30
    /// Steps either side of now a code is accepted for (a phone's clock a little off).
    static let drift = 1

    static func step(at date: Date) -> Int64 { Int64((date.timeIntervalSince1970 / period).rounded(.down)) }

    /// The code of `step` under `secret` (RFC 4226 §5.3's dynamic truncation).
    static func code(secret: [UInt8], step: Int64) -> String {
        var counter = UInt64(bitPattern: step).bigEndian
        let message = withUnsafeBytes(of: &counter) { Array($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: secret)))
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let value = (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        let code = String(value % 1_000_000)
        return String(repeating: "0", count: digits - code.count) + code
    }

    /// The step `code` belongs to, within `drift` of `date`; nil when it matches none. Every
    /// candidate is compared (constant work whatever the code).
    static func matchingStep(of code: String, secret: [UInt8], at date: Date) -> Int64? {
        let typed = code.filter { !$0.isWhitespace }
        guard typed.count == digits, typed.allSatisfy(\.isASCII), typed.allSatisfy(\.isNumber) else { return nil }
        let now = step(at: date)
        var found: Int64?
        for candidate in (now - Int64(drift))...(now + Int64(drift)) where constantTimeEqual(Self.code(secret: secret, step: candidate), typed) {
            found = candidate
        }
        return found
    }

    static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// The `otpauth://` link an authenticator app scans.
    static func link(secret: [UInt8], account: String, issuer: String = "Storytime") -> String {
        let label = "\(issuer):\(account)".addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "@.-_:"))) ?? account
        return "otpauth://totp/\(label)?secret=\(Base32.encode(secret))&issuer=\(issuer)&algorithm=SHA1&digits=\(digits)&period=\(Int(period))"
    }
}

/// RFC 4648 base32 without padding: how authenticator apps take a secret typed by hand.
enum Base32 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = [], buffer = 0, bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | Int(byte); bits += 8
            while bits >= 5 { out.append(alphabet[(buffer >> (bits - 5)) & 31]); bits -= 5 }
        }
        if bits > 0 { out.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ text: String) -> [UInt8]? {
        var out: [UInt8] = [], buffer = 0, bits = 0
        for char in text.uppercased().utf8 where char != UInt8(ascii: "=") && char != UInt8(ascii: " ") {
            guard let value = alphabet.firstIndex(of: char) else { return nil }
            buffer = (buffer << 5) | value; bits += 5
            if bits >= 8 { out.append(UInt8((buffer >> (bits - 8)) & 0xff)); bits -= 8 }
        }
        return out
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
