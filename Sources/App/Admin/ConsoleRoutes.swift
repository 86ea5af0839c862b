import Vapor

/// The console under /admin: sessions for every page, sign-in for all but the login page, CSRF on
/// every state-changing form; one `ResourceController` per registered resource.
enum ConsoleRoutes {
    static func register(on app: Application) throws {
        try ResourceRegistry.checkDeclarations()
        let admin = app.grouped(.constant(AdminPath.prefix)).grouped(AdminSessionMiddleware())
        try admin.register(collection: LoginController())
        let staff = admin.grouped(StaffAuthMiddleware())
        BookImportController.registerUpload(on: staff)
        BookCoverController.registerUpload(on: staff)
        let signedIn = staff.grouped(CSRFMiddleware(maxBody: app.settings.consoleFormLimit))
        try signedIn.register(collection: DashboardController())
        try signedIn.register(collection: AuditController())
        try signedIn.register(collection: PlaysReportController())
        try signedIn.register(collection: SearchMissesController())
        try signedIn.register(collection: OutboxController())
        try signedIn.register(collection: RightsCalendarController())
        try signedIn.register(collection: BatchJobController())
        try signedIn.register(collection: BookImportController())
        try signedIn.register(collection: PasswordController())
        try signedIn.register(collection: VideoReplayController())
        try signedIn.register(collection: BookCoverController())
        try signedIn.register(collection: TwoFactorController())
        try signedIn.register(collection: ReviewController())
        try signedIn.register(collection: WebhookDeliveriesController())
        try signedIn.register(collection: StaffAccountController())
        try signedIn.register(collection: SavedViewsController())
        try signedIn.register(collection: QuickSearchController())
        try signedIn.register(collection: LookupController())
        try signedIn.register(collection: PreviewController())
        for resource in ResourceRegistry.all {
            try signedIn.register(collection: ResourceController(resource: resource))
        }
    }
}
