import Core
import Foundation
import Vapor

/// Input rules shared by the account routes.
enum AccountInput {
    /// Characters that make an address a *form* — a display name, angle brackets, a comment, a
    /// quoted part, a domain literal, several addresses — which a mail server reads as another
    /// mailbox than the text the budget and the accounts are keyed on.
    static let formCharacters: Set<Unicode.Scalar> = ["<", ">", "(", ")", ",", ";", ":", "\"", "[", "]", "\\"]
    /// ASCII a dot-atom local part may hold besides letters and digits (RFC 5322 `atext`).
    static let localSymbols: Set<Unicode.Scalar> = ["!", "#", "$", "%", "&", "'", "*", "+", "-", "/", "=", "?", "^", "_", "`", "{", "|", "}", "~"]

    /// The address alone (`local@domain`, the local part a dot-atom, the domain dot-separated
    /// labels; non-ASCII letters allowed), at most 320 characters, surrounding spaces trimmed and
    /// in Unicode NFC — so one mailbox has one spelling up to case, and `lower()` of it is the key
    /// of the account and of the mail budget. A form (`Name <a@b>`, `<a@b>`, `a@b (home)`,
    /// `a@b, c@d`) is the 422 `email_form` naming `field`; anything else not an address the 400
    /// `invalid_parameter`.
    static func email(_ body: JSONBody, _ field: String) throws -> String {
        let email = try body.string(field, maxLength: 320).trimmingCharacters(in: .whitespacesAndNewlines)
            .precomposedStringWithCanonicalMapping
        if email.unicodeScalars.contains(where: formCharacters.contains) || email.unicodeScalars.filter({ $0 == "@" }).count > 1 {
            throw Problem(status: .unprocessableEntity, code: "email_form",
                          detail: "\(field) must be the address alone, such as parent@example.com: no name, angle brackets, comment or second address",
                          field: field)
        }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, isLocalPart(parts[0]), isDomain(parts[1]) else {
            throw Problem.invalidParameter(field, "\(field) must be an email address such as parent@example.com")
        }
        return email
    }

    private static func isLocalPart(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.count <= 64 && text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { atom in
            !atom.isEmpty && atom.unicodeScalars.allSatisfy { isWordScalar($0) || localSymbols.contains($0) }
        }
    }

    private static func isDomain(_ text: Substring) -> Bool {
        !text.isEmpty && text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && !label.hasPrefix("-") && !label.hasSuffix("-") && label.unicodeScalars.allSatisfy { isWordScalar($0) || $0 == "-" }
        }
    }

    /// An ASCII letter or digit, or a non-ASCII scalar that is neither a space nor a control.
    private static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return scalar.properties.isAlphabetic || (48...57).contains(scalar.value) }
        return !scalar.properties.isWhitespace && scalar.properties.generalCategory != .control
            && scalar.properties.generalCategory != .format
    }

    static func country(_ body: JSONBody) throws -> String {
        guard case .success(let codes) = Territories.parse(try body.string("country", maxLength: 2)), codes.count == 1 else {
            throw Problem.invalidParameter("country", "country must be an ISO 3166-1 alpha-2 code such as FR or US")
        }
        return codes[0]
    }

    /// Every request that mails an address (sign-up, resend, reset, an address change) spends a
    /// few per address (its `lower()`) and per client in a window; the 429 says how long to wait.
    /// Spent outside the request's transaction, so a refusal that rolls it back still counts.
    static func spendMailBudget(email: String, req: Request) async throws {
        if let wait = try await LoginThrottle(.mail, email: email, request: req).reserve(on: req.sql) {
            throw Problem(status: .tooManyRequests, code: "too_many_requests",
                          detail: "Too many requests for this address; try again in \((wait + 59) / 60) minutes.",
                          headers: ["Retry-After": String(wait)])
        }
    }
}
