import Foundation
import SQLKit
import Vapor

/// The statements of a parent's children: list, add (at most `limit`), change, remove.
enum ChildrenQueries {
    static let limit = 10

    struct Row: Codable, Sendable { let id: Int; let name: String; let birthYear: Int?; let avatar: String?; let libraryCount: Int }
    struct Verified: Decodable { let verified: Bool }
    struct Added: Decodable { let id: Int }
    /// How much is kept about a child (the removal's receipt).
    struct Kept: Decodable { let libraryEntries: Int; let plays: Int; let controls: Int; let auditEntries: Int; let requests: Int }

    static func list(parent: Int, child: Int? = nil, at now: Date, on sql: any SQLDatabase) async throws -> [ChildDTO] {
        let only: SQLQueryString = child.map { " AND c.id = \(bind: $0)" } ?? ""
        return try await sql.raw("""
            SELECT c.id, c.name, c.birth_year, c.avatar,
                   (SELECT count(*) FROM library_entries le JOIN books b ON b.id = le.book_id
                     WHERE le.child_id = c.id AND \(BookSQL.live("b", at: now))) AS library_count
              FROM children c WHERE c.family_id = \(FamilyRole.family(of: parent))\(only) ORDER BY c.id
            """).all(decoding: Row.self, keyDecodingStrategy: .convertFromSnakeCase)
            .map { ChildDTO(id: $0.id, name: $0.name, birthYear: $0.birthYear, avatar: $0.avatar, libraryCount: $0.libraryCount) }
    }

    /// Adds a child unless the family has `limit` already: the family's row is locked first, so
    /// concurrent adds (by any of its parents) are counted one after another. Nil: the limit is reached. An account whose
    /// address is not verified yet adds none (403 `email_unverified`).
    static func add(parent: Int, name: String, birthYear: Int?, avatar: String?, on sql: any SQLDatabase) async throws -> Int? {
        guard try await sql.raw("""
            SELECT email_verified_at IS NOT NULL AS verified FROM parents WHERE id = \(bind: parent) FOR NO KEY UPDATE
            """).one(decoding: Verified.self).verified else {
            throw Problem(status: .forbidden, code: "email_unverified",
                          detail: "Confirm your email address first: follow the link we mailed you (or ask for a new one).")
        }
        // The role is read again under the family's lock: the route's check ran before it, and an
        // account joining another family as a caregiver meanwhile adds no child to either.
        let member = try await FamilyQueries.lockOwn(parent, parentOnly: true, on: sql)
        return try await sql.raw("""
            INSERT INTO children (family_id, added_by, name, birth_year, avatar)
            SELECT \(bind: member.familyId), \(bind: parent), \(bind: name), \(bind: birthYear), \(bind: avatar)
             WHERE (SELECT count(*) FROM children WHERE family_id = \(bind: member.familyId)) < \(bind: limit)
            RETURNING id
            """).first(decoding: Added.self)?.id
    }

    /// Sets the given columns of the parent's child; false when it is not theirs.
    static func update(child: Int, parent: Int, _ values: [(column: String, value: (any Encodable & Sendable)?)],
                       on sql: any SQLDatabase) async throws -> Bool {
        var assignments: [SQLQueryString] = ["updated_at = now()"]
        for (column, value) in values {
            assignments.append(value.map { "\(ident: column) = \(bind: $0)" } ?? "\(ident: column) = NULL")
        }
        return try await sql.raw("""
            UPDATE children SET \(assignments.joined(separator: ", ")) WHERE id = \(bind: child) AND family_id = \(FamilyRole.family(of: parent)) RETURNING id
            """).first() != nil
    }

    /// Removes the parent's child and everything kept about it (library, plays, controls, the
    /// parent's audit rows about it) in `sql`'s transaction; the receipt, or nil when not theirs.
    static func remove(child: Int, parent: Int, on sql: any SQLDatabase) async throws -> (receipt: RemovalReceiptDTO, devices: [Int])? {
        guard let row = try await sql.raw("""
            SELECT (SELECT count(*) FROM library_entries WHERE child_id = c.id) AS library_entries,
                   (SELECT count(*) FROM plays WHERE child_id = c.id) AS plays,
                   (SELECT count(*) FROM child_controls WHERE child_id = c.id) AS controls,
                   (SELECT count(*) FROM parent_audit_log WHERE child_id = c.id) AS audit_entries,
                   (SELECT count(*) FROM book_requests WHERE child_id = c.id) AS requests
              FROM children c WHERE c.id = \(bind: child) AND c.family_id = \(FamilyRole.family(of: parent)) FOR UPDATE
            """).first(decoding: Kept.self, keyDecodingStrategy: .convertFromSnakeCase) else { return nil }
        var receipt = RemovalReceiptDTO(childId: child, libraryEntries: row.libraryEntries,
                                        plays: row.plays, controls: row.controls,
                                        auditEntries: row.auditEntries,
                                        requests: row.requests, devicesSignedOut: 0)
        // Its devices are signed out (the caller tells `RevokedSessions`), then the rest goes.
        let devices = try await SessionQueries.revoke(devices: "d.child_id = \(bind: child)", on: sql)
        receipt.devicesSignedOut = devices.count
        try await sql.raw("DELETE FROM parent_audit_log WHERE child_id = \(bind: child)").run()
        // Library entries, plays, controls, requests and folded totals go with the child (ON DELETE CASCADE).
        try await sql.raw("DELETE FROM children WHERE id = \(bind: child)").run()
        try await sql.raw("""
            INSERT INTO parent_audit_log (parent_id, action, after)
            VALUES (\(bind: parent), 'child.remove', jsonb_build_object('child_id', \(bind: child)::bigint, 'plays', \(bind: receipt.plays)::bigint,
                    'library_entries', \(bind: receipt.libraryEntries)::bigint))
            """).run()
        return (receipt, devices)
    }
}
