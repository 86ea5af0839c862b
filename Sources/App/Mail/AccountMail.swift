import Foundation

/// The mails the family side sends, in our voice: short, warm, one clear action, and what to do
/// when it was not you. Each has a plain-text and an HTML body; values are escaped in the HTML.
struct AccountMail: Sendable, Equatable {
    enum Kind: String, Sendable { case verify, reset, newEmail = "new_email", emailChangeRequested = "email_change", signUpExisting = "sign_up_existing", addressInUse = "address_in_use", familyInvitation = "family_invitation" }

    let kind: Kind
    let subject: String
    let text: String
    let html: String

    /// Sign-up, or a resend: confirm the address (the link is good for `verifyHours`).
    static func verify(link: String) -> AccountMail {
        make(.verify, subject: "Confirm your email for Storytime",
             lines: ["Welcome to Storytime!", "Please confirm this is your email address, so you can add your children and we can reach you if you ever forget your password."],
             action: ("Confirm my email", link),
             after: ["This link works once, for \(AccountTokens.Purpose.verify.lifetimeText).", "Didn't sign up? Ignore this mail and no account will be confirmed."])
    }

    static func reset(link: String) -> AccountMail {
        make(.reset, subject: "Reset your Storytime password",
             lines: ["Someone — hopefully you — asked to reset the password of your Storytime account."],
             action: ("Choose a new password", link),
             after: ["This link works once, for \(AccountTokens.Purpose.reset.lifetimeText). Choosing a new password signs out every device.",
                     "Didn't ask? Ignore this mail: your password stays as it is."])
    }

    static func newEmail(link: String) -> AccountMail {
        make(.newEmail, subject: "Confirm your new email for Storytime",
             lines: ["You asked to use this address for your Storytime account."],
             action: ("Use this email", link),
             after: ["This link works once, for \(AccountTokens.Purpose.email.lifetimeText). Until then your account keeps its current address."])
    }

    /// To the old address when a change is requested: the owner can still stop it.
    static func emailChangeRequested(to newAddress: String) -> AccountMail {
        make(.emailChangeRequested, subject: "Your Storytime email is about to change",
             lines: ["Someone signed in to your Storytime account asked to use \(newAddress) instead of this address.",
                     "Nothing changes until the new address is confirmed."],
             action: nil,
             after: ["Wasn't you? Change your password in the app — that signs out every other device — and the request goes nowhere without the new mailbox."])
    }

    /// A sign-up with an address that already has an account: tell its owner, not the sign-up form.
    static func signUpExisting(resetLink: String) -> AccountMail {
        make(.signUpExisting, subject: "You already have a Storytime account",
             lines: ["Someone tried to create a Storytime account with this address, which already has one.",
                     "If it was you, just sign in. Forgot your password? Ask for a reset in the app, or here:"],
             action: ("Reset my password", resetLink),
             after: ["Wasn't you? Nothing has changed; you can ignore this mail."])
    }

    /// To an address that already has an account when another account asks to move to it: its
    /// owner learns of it; the asking account learns nothing (its answer and notice are the same).
    static func addressInUse() -> AccountMail {
        make(.addressInUse, subject: "Someone asked to use your email for another Storytime account",
             lines: ["Someone signed in to another Storytime account asked to use this address for it.",
                     "This address already has its own Storytime account, so nothing has changed."],
             action: nil,
             after: ["Wasn't you? You can ignore this mail: your account and its password stay as they are."])
    }

    /// An invitation to join a family (`POST /family/invitations`): the link opens a page that says
    /// what it is and how to accept in the app; nothing is used up by opening it.
    static func familyInvitation(from inviter: String, role: FamilyRole, link: String) -> AccountMail {
        let what = role == .parent ? "as a parent: you will manage the children with them"
                                   : "as a caregiver: you will be able to put on stories for the children"
        return make(.familyInvitation, subject: "\(inviter) invited you to their family on Storytime",
                    lines: ["\(inviter) invited this address to join their family on Storytime, \(what).",
                            "Sign in to the Storytime app with this address (or create an account with it), then accept:"],
                    action: ("See the invitation", link),
                    after: ["This invitation works once, for 7 days, and only for an account with this address.",
                            "Don't know them? Ignore this mail: nothing happens unless you accept."])
    }

    private static func make(_ kind: Kind, subject: String, lines: [String], action: (label: String, link: String)?, after: [String]) -> AccountMail {
        var text = lines
        if let action { text.append("\(action.label): \(action.link)") }
        text += after + ["— The Storytime team"]
        var html = lines.map { "<p>\(escaped($0))</p>" }
        if let action {
            html.append(#"<p><a href="\#(escaped(action.link))" style="background:#5b3cc4;color:#fff;padding:10px 18px;border-radius:6px;text-decoration:none;display:inline-block">\#(escaped(action.label))</a></p>"#)
            html.append(#"<p style="font-size:13px;color:#555">Or paste this link into your browser: \#(escaped(action.link))</p>"#)
        }
        html += after.map { "<p>\(escaped($0))</p>" } + ["<p>— The Storytime team</p>"]
        let document = """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><title>\(escaped(subject))</title></head>
            <body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;font-size:16px;line-height:1.5;color:#222;max-width:560px;margin:auto;padding:16px">
            \(html.joined(separator: "\n"))
            </body></html>
            """
        return AccountMail(kind: kind, subject: subject, text: text.joined(separator: "\n\n") + "\n", html: document)
    }

    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
