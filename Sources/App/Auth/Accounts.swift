import SQLKit
import Vapor

/// Creating accounts, shared by the command line and the demo seed.
enum Accounts {
    /// The row of a new account.
    struct Created: Decodable { let id: Int }

    static func createStaff(email: String, passwordHash: String, role: StaffRole, on sql: any SQLDatabase) async throws -> Int {
        do {
            let row = try await sql.raw("""
                INSERT INTO staff_users (email, password_hash, role)
                VALUES (\(bind: email), \(bind: passwordHash), \(bind: role.rawValue)) RETURNING id
                """).first(decoding: Created.self)
            return row!.id
        } catch let error where ConstraintViolation(error)?.constraint == "staff_users_email_key" {
            throw Abort(.conflict, reason: "a staff user with email \(email) already exists")
        }
    }

    /// Creates the parent and their children in one transaction; the operator vouches for the
    /// address, so it is verified.
    static func createParent(email: String, passwordHash: String, children: [String], timeZone: String = "UTC", country: String? = nil,
                             on sql: any SQLDatabase) async throws -> Int {
        do {
            // One statement, so the parent, its family and the children land together or not at all
            // (the account's trigger sees the family made here and makes no other).
            let row = try await sql.raw("""
                WITH parent AS (
                    INSERT INTO parents (email, password_hash, time_zone, country, email_verified_at)
                    VALUES (\(bind: email), \(bind: passwordHash), \(bind: timeZone), \(bind: country)::text, now()) RETURNING id
                ), family AS (
                    INSERT INTO families DEFAULT VALUES RETURNING id
                ), member AS (
                    INSERT INTO family_members (account_id, family_id, role) SELECT parent.id, family.id, 'parent' FROM parent, family
                ), kids AS (
                    INSERT INTO children (family_id, added_by, name)
                    SELECT family.id, parent.id, name FROM parent, family, unnest(\(bind: children)::text[]) WITH ORDINALITY AS c(name, n) ORDER BY n
                )
                SELECT id FROM parent
                """).first(decoding: Created.self)
            return row!.id
        } catch let error where ConstraintViolation(error)?.constraint == "parents_email_key" {
            throw Abort(.conflict, reason: "a parent with email \(email) already exists")
        }
    }
}
