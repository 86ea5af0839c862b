import Foundation
import SQLKit
import Vapor

/// The statements of self-service accounts: sign-up, confirmations, resets, deletion.
enum AccountQueries {
    /// A new unverified parent, or nil when the address already has an account (the unique index
    /// on `lower(email)` decides, so two concurrent sign-ups make one account).
    static func create(email: String, passwordHash: String, country: String, timeZone: String,
                       notice: String, address: String, on sql: any SQLDatabase) async throws -> Int? {
        guard let id = try await sql.raw("""
            INSERT INTO parents (email, password_hash, country, time_zone) VALUES (\(bind: email), \(bind: passwordHash), \(bind: country), \(bind: timeZone))
            ON CONFLICT ((lower(email))) DO NOTHING RETURNING id
            """).first(decoding: Created.self)?.id else { return nil }
        try await sql.raw("""
            INSERT INTO privacy_consents (parent_id, notice_version, address) VALUES (\(bind: id), \(bind: notice), \(bind: address))
            """).run()
        return id
    }

    struct Created: Decodable { let id: Int }

    struct Account: Decodable, Sendable { let id: Int; let email: String; let verified: Bool; let locked: Bool }

    static func find(email: String, on sql: any SQLDatabase) async throws -> Account? {
        try await sql.raw("""
            SELECT id, email, email_verified_at IS NOT NULL AS verified, locked_at IS NOT NULL AS locked FROM parents WHERE lower(email) = lower(\(bind: email))
            """).first(decoding: Account.self)
    }

    static func find(id: Int, on sql: any SQLDatabase) async throws -> Account? {
        try await sql.raw("""
            SELECT id, email, email_verified_at IS NOT NULL AS verified, locked_at IS NOT NULL AS locked FROM parents WHERE id = \(bind: id)
            """).first(decoding: Account.self)
    }

    /// Marks the address verified when it is still the one the link was sent to.
    static func markVerified(parent: Int, email: String, on sql: any SQLDatabase) async throws -> Bool {
        try await sql.raw("""
            UPDATE parents SET email_verified_at = coalesce(email_verified_at, now()) WHERE id = \(bind: parent) AND lower(email) = lower(\(bind: email)) RETURNING id
            """).first() != nil
    }

    /// Mails `parent` a new link of `purpose` (and its mail) in `sql`'s transaction; `stamp`: the
    /// account's security stamp an `email` link is bound to.
    static func mail(_ purpose: AccountTokens.Purpose, parent: Int, to email: String, stamp: Int? = nil, baseURL: String,
                     _ make: (String) -> AccountMail, on sql: any SQLDatabase) async throws {
        let link = try await AccountTokens.issue(purpose, parent: parent, email: email, stamp: stamp, baseURL: baseURL, on: sql)
        try await Outbox.enqueue(make(link), to: email, parent: parent, on: sql)
    }

    struct Locked: Decodable, Sendable { let email: String; let securityStamp: Int }

    /// The account's address and security stamp, its row locked until `sql`'s transaction ends
    /// (an address change is asked against one state of the account).
    static func lock(parent: Int, on sql: any SQLDatabase) async throws -> Locked? {
        try await sql.raw("SELECT email, security_stamp FROM parents WHERE id = \(bind: parent) FOR UPDATE")
            .first(decoding: Locked.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    /// "Sign out everywhere": moves the account's security stamp, which ends every pending address
    /// change (the `parents_end_pending_links` trigger, in `sql`'s transaction). A new password, a
    /// confirmed or changed address and a lock move it by themselves (`parents_security_stamp`).
    static func endPendingChanges(parents: [Int], on sql: any SQLDatabase) async throws {
        try await sql.raw("UPDATE parents SET security_stamp = security_stamp + 1 WHERE id = ANY(\(bind: parents)::bigint[])").run()
    }

    /// Moves the account to `email` (confirmed: its mailbox was reached), audited, only while its
    /// security stamp is still `stamp`, the one the change was asked at; false when it moved.
    static func moveEmail(parent: Int, to email: String, stamp: Int, on sql: any SQLDatabase) async throws -> Bool {
        try await sql.raw("""
            WITH old AS (SELECT email FROM parents WHERE id = \(bind: parent) AND security_stamp = \(bind: stamp) FOR UPDATE),
            changed AS (UPDATE parents SET email = \(bind: email), email_verified_at = now(), updated_at = now()
                         WHERE id = \(bind: parent) AND security_stamp = \(bind: stamp) RETURNING id)
            INSERT INTO parent_audit_log (parent_id, action, before, after)
            SELECT \(bind: parent), 'account.email', jsonb_build_object('email', old.email), jsonb_build_object('email', \(bind: email)::text)
              FROM old, changed RETURNING parent_id
            """).first() != nil
    }

    /// What a deleted account held: whether it was its family's last parent (then the family
    /// goes with it: its children's ids and counts for the receipt), and its devices' ids.
    struct Family: Decodable {
        let lastParent: Bool; let children: [Int]?; let devices: [Int]?; let libraryEntries: Int; let plays: Int; let controls: Int
    }

    /// Deletes the account (its devices, tokens, consents, audit rows, mail) in `sql`'s
    /// transaction; when it was its family's last parent, the family's children too (with their
    /// libraries, plays and controls) — a family with another parent keeps them, and caregivers
    /// left without a parent found families of their own (migrations/0038). The family's row is
    /// locked first, so two parents deleting their accounts at once are decided one after the
    /// other. The receipt, the removed children's and devices' ids (to forget in memory), or nil.
    static func delete(parent: Int, on sql: any SQLDatabase) async throws -> (receipt: AccountRemovalDTO, children: [Int], devices: [Int])? {
        try await sql.raw("SELECT id FROM families WHERE id = \(FamilyRole.family(of: parent)) FOR UPDATE").run()
        guard let row = try await sql.raw("""
            WITH me AS (SELECT m.family_id, m.role = 'parent' AND NOT EXISTS (
                            SELECT 1 FROM family_members o WHERE o.family_id = m.family_id AND o.role = 'parent' AND o.account_id <> m.account_id) AS last_parent
                          FROM family_members m WHERE m.account_id = \(bind: parent)),
                 gone AS (SELECT c.id FROM children c JOIN me ON c.family_id = me.family_id WHERE me.last_parent)
            SELECT COALESCE((SELECT last_parent FROM me), false) AS last_parent,
                   (SELECT array_agg(id ORDER BY id) FROM gone) AS children,
                   (SELECT array_agg(id ORDER BY id) FROM parent_devices WHERE parent_id = p.id) AS devices,
                   (SELECT count(*) FROM library_entries le WHERE le.child_id IN (SELECT id FROM gone)) AS library_entries,
                   (SELECT count(*) FROM plays pl WHERE pl.child_id IN (SELECT id FROM gone)) AS plays,
                   (SELECT count(*) FROM child_controls cc WHERE cc.child_id IN (SELECT id FROM gone)) AS controls
              FROM parents p WHERE p.id = \(bind: parent) FOR UPDATE OF p
            """).first(decoding: Family.self, keyDecodingStrategy: .convertFromSnakeCase) else { return nil }
        let children = row.children ?? []
        let devices = row.devices ?? []
        // Everything else references the account or a child with ON DELETE CASCADE; the family
        // goes by the member trigger when no parent is left.
        try await sql.raw("DELETE FROM parents WHERE id = \(bind: parent)").run()
        let receipt = AccountRemovalDTO(children: children.count, libraryEntries: row.libraryEntries,
                                        plays: row.plays, controls: row.controls,
                                        devices: devices.count, familyRemoved: row.lastParent)
        return (receipt, children, devices)
    }

    struct Me: Decodable { let id: Int; let email: String; let verified: Bool; let timeZone: String; let country: String?; let preferredLocale: String? }

    static func me(parent: Int, on sql: any SQLDatabase) async throws -> Me? {
        try await sql.raw("""
            SELECT id, email, email_verified_at IS NOT NULL AS verified, time_zone, country, preferred_locale FROM parents WHERE id = \(bind: parent)
            """).first(decoding: Me.self, keyDecodingStrategy: .convertFromSnakeCase)
    }

    /// Sets one of the parent's own settings and audits it (`account.<column>`, before → after);
    /// `verified`: the new value is a confirmed email address.
    static func set(_ column: StaticString, to value: String, of parent: Int, verified: Bool = false, on sql: any SQLDatabase) async throws {
        let name = column.description
        let confirmed: SQLQueryString = verified ? ", email_verified_at = now()" : ""
        try await sql.raw("""
            WITH old AS (SELECT \(ident: name) AS value FROM parents WHERE id = \(bind: parent) FOR UPDATE),
            changed AS (UPDATE parents SET \(ident: name) = \(bind: value), updated_at = now()\(confirmed) WHERE id = \(bind: parent) RETURNING id)
            INSERT INTO parent_audit_log (parent_id, action, before, after)
            SELECT \(bind: parent), \(bind: "account." + name), jsonb_build_object(\(bind: name)::text, old.value), jsonb_build_object(\(bind: name)::text, \(bind: value)::text)
              FROM old, changed
            """).run()
    }

    /// How a password came to change, as the audit log names it.
    enum PasswordChange: String { case changed = "account.password", reset = "account.password_reset" }

    /// A new password hash, audited without the hash.
    /// The account's preferred locale (nil: none), recorded in its log as other settings are.
    static func setPreferredLocale(_ locale: String?, of parent: Int, on sql: any SQLDatabase) async throws {
        try await sql.raw("""
            WITH old AS (SELECT preferred_locale AS value FROM parents WHERE id = \(bind: parent) FOR UPDATE),
            changed AS (UPDATE parents SET preferred_locale = \(bind: locale), updated_at = now() WHERE id = \(bind: parent) RETURNING id)
            INSERT INTO parent_audit_log (parent_id, action, before, after)
            SELECT \(bind: parent), 'account.preferred_locale', jsonb_build_object('preferred_locale', old.value), jsonb_build_object('preferred_locale', \(bind: locale)::text)
              FROM old, changed
            """).run()
    }

    static func setPassword(_ hash: String, of parent: Int, audit: PasswordChange, on sql: any SQLDatabase) async throws {
        let stamp = audit == .changed ? "changed_at" : "reset_at"
        try await sql.raw("UPDATE parents SET password_hash = \(bind: hash), updated_at = now() WHERE id = \(bind: parent)").run()
        try await sql.raw("""
            INSERT INTO parent_audit_log (parent_id, action, after) VALUES (\(bind: parent), \(bind: audit.rawValue), jsonb_build_object(\(bind: stamp)::text, now()))
            """).run()
    }
}

struct AccountRemovalDTO: Content {
    let children: Int
    let libraryEntries: Int
    let plays: Int
    let controls: Int
    let devices: Int
    /// Whether the family went with the account (it was the last parent): then the counts above
    /// are the family's children's; otherwise the children stay with the family's other parents.
    let familyRemoved: Bool
}
