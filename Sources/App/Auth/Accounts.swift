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
            // One statement, so the parent and the children land together or not at all.
            let row = try await sql.raw("""
                WITH parent AS (
                    INSERT INTO parents (email, password_hash, time_zone, country, email_verified_at)
                    VALUES (\(bind: email), \(bind: passwordHash), \(bind: timeZone), \(bind: country)::text, now()) RETURNING id
                ), kids AS (
                    INSERT INTO children (parent_id, name)
                    SELECT parent.id, name FROM parent, unnest(\(bind: children)::text[]) WITH ORDINALITY AS c(name, n) ORDER BY n
                )
                SELECT id FROM parent
                """).first(decoding: Created.self)
            return row!.id
        } catch let error where ConstraintViolation(error)?.constraint == "parents_email_key" {
            throw Abort(.conflict, reason: "a parent with email \(email) already exists")
        }
    }
}
