import Foundation
import OpenAPIRuntime

/// Signing a family up and the mailed links: confirm an address, reset a forgotten password,
/// change the address, delete the account.
extension StorytimeClient {
    /// The version of the privacy notice to show; pass it to `signUp` once the parent accepts it.
    public func privacyNoticeVersion() async throws -> String {
        try await perform { try await $0.privacyNotice().ok.body.json.data.version }
    }

    /// Signs a family up. The answer is the same whether or not the address had an account (its
    /// owner is mailed instead); the account can sign in at once and adds children once the
    /// address is confirmed (`verifyEmail(link:)`).
    public func signUp(email: String, password: String, country: String, timeZone: String, privacyNotice: String) async throws {
        _ = try await perform {
            try await $0.signUp(body: .json(.init(email: email, password: password, country: country, timeZone: timeZone,
                                                  privacyNotice: privacyNotice))).accepted
        }
    }

    /// Confirms an address with a mailed link (pasted whole, or just its token).
    public func verifyEmail(link: String) async throws {
        _ = try await perform { try await $0.verifyEmail(body: .json(.init(token: Self.token(fromLink: link)))).noContent }
    }

    public func resendVerification(email: String) async throws {
        _ = try await perform { try await $0.resendVerification(body: .json(.init(email: email))).accepted }
    }

    /// Mails a link to choose a new password (valid one hour).
    public func requestPasswordReset(email: String) async throws {
        _ = try await perform { try await $0.requestPasswordReset(body: .json(.init(email: email))).accepted }
    }

    /// Sets the new password from the mailed link; every device is signed out (sign in again).
    public func resetPassword(link: String, newPassword: String) async throws {
        _ = try await perform {
            try await $0.confirmPasswordReset(body: .json(.init(token: Self.token(fromLink: link), password: newPassword))).noContent
        }
    }

    /// Asks to use a new address; it takes effect once confirmed from its mailbox (`verifyEmail`).
    public func changeEmail(to email: String, password: String) async throws {
        _ = try await authorized { try await $0.changeEmail(body: .json(.init(email: email, password: password))).accepted }
    }

    /// Deletes the account and everything of the family; the receipt counts what went.
    @discardableResult
    public func deleteAccount(password: String) async throws -> AccountRemoval {
        let receipt = try await authorized { try await $0.deleteAccount(body: .json(.init(password: password))).ok.body.json.data }
        await signOut()
        return receipt
    }

    /// The `token` parameter of a mailed link, or `text` itself when it is not a link.
    static func token(fromLink text: String) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let components = URLComponents(string: trimmed),
              let token = components.queryItems?.first(where: { $0.name == "token" })?.value else { return trimmed }
        return token
    }
}
