import Vapor

/// What a staff member may do: admins everything, editors the catalog, viewers only read.
enum StaffRole: String, Codable, Sendable, CaseIterable {
    case admin, editor, viewer
}

/// The signed-in staff member of a console request.
struct StaffUser: Sendable, Equatable {
    let id: Int
    let email: String
    let role: StaffRole
    /// Whether they signed in with a second factor enrolled (TOTP).
    var hasSecondFactor = false
    /// Their time zone (an IANA name): console times are shown in it.
    var timeZone = "UTC"
    /// auto (the system's), light or dark.
    var theme = "auto"

    var canEdit: Bool { role != .viewer }
    var isAdmin: Bool { role == .admin }
}

extension Request {
    /// Editors and admins change the catalog; viewers only read.
    func requireEditor() throws {
        guard try staff.canEdit else { throw Abort(.forbidden, reason: "Your role (viewer) can only read the catalog.") }
    }

    func requireAdmin() throws {
        guard try staff.isAdmin else { throw Abort(.forbidden, reason: "Only admins can do this.") }
    }
}

extension StaffUser {
    /// How another staff member is named to this one: their email for an admin (or oneself), else
    /// "Staff #id" — staff accounts are admin-only records, and so are their emails.
    func name(ofStaff id: Int?, email: String) -> String {
        if isAdmin || id == self.id || !email.contains("@") { return email }   // no "@": the system ("schedule")
        return id.map { "Staff #\($0)" } ?? "A former staff member"
    }
}
