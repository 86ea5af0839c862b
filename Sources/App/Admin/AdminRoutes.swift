import Vapor

/// The console under /admin: sessions for every page, sign-in for all but the login page, CSRF on
/// every state-changing form.
enum AdminRoutes {
    static let resources: [AdminResource] = [.books, .categories, .publishers, .rightsWindows, .videoAssets, .staffUsers]

    static func register(on app: Application) throws {
        let admin = app.grouped("admin").grouped(AdminSessionMiddleware())
        try admin.register(collection: LoginController())
        let signedIn = admin.grouped(StaffAuthMiddleware()).grouped(CSRFMiddleware())
        try signedIn.register(collection: DashboardController())
        try signedIn.register(collection: AuditController())
        try signedIn.register(collection: PlaysReportController())
        try signedIn.register(collection: PasswordController())
        for resource in resources {
            try signedIn.register(collection: ResourceController(resource: resource))
        }
    }
}
