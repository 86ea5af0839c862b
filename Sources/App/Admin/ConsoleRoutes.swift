import Vapor

/// The console under /admin: sessions for every page, sign-in for all but the login page, CSRF on
/// every state-changing form; one `ResourceController` per registered resource. Staff API tokens
/// reach only the routes grouped here with `tokens(reads:posts:)`; every other route refuses them.
enum ConsoleRoutes {
    static func register(on app: Application) throws {
        try ResourceRegistry.checkDeclarations()
        let admin = app.grouped(.constant(AdminPath.prefix)).grouped(AdminSessionMiddleware())
        try admin.register(collection: LoginController())
        let staff = admin.grouped(StaffAuthMiddleware())
        BookImportController.registerUpload(on: staff.tokens(reads: [], posts: [.import]))
        BookCoverController.registerUpload(on: staff)
        let signedIn = staff.grouped(CSRFMiddleware(maxBody: app.settings.consoleFormLimit))
        // Signed-in staff only (no token): families, staff, mail, history, reports, automation, one's account.
        try signedIn.register(collection: AuditController())
        try signedIn.register(collection: PlaysReportController())
        try signedIn.register(collection: SearchMissesController())
        try signedIn.register(collection: OutboxController())
        try signedIn.register(collection: PasswordController())
        try signedIn.register(collection: VideoReplayController())
        try signedIn.register(collection: TwoFactorController())
        try signedIn.register(collection: WebhookDeliveriesController())
        try signedIn.register(collection: StaffAccountController())
        try signedIn.register(collection: SavedViewsController())
        try signedIn.register(collection: FamilyMembersController())
        // `read_catalog`: the catalog's pages, read only.
        let catalog = signedIn.tokens(reads: [.readCatalog])
        try catalog.register(collection: DashboardController())
        try catalog.register(collection: RightsCalendarController())
        try catalog.register(collection: BookCoverController())
        try catalog.register(collection: ReviewController())
        try catalog.register(collection: QuickSearchController())
        try catalog.register(collection: LookupController())
        try catalog.register(collection: PreviewController())
        try catalog.register(collection: TranslationsController())
        try signedIn.tokens(reads: [.readCatalog, .batch]).register(collection: BatchJobController())
        try signedIn.tokens(reads: [.readCatalog, .import], posts: [.import]).register(collection: BookImportController())
        for resource in ResourceRegistry.all {
            // The catalog's lists: read with `read_catalog`, batch actions with `batch`.
            let routes = resource.isCatalog ? signedIn.tokens(reads: [.readCatalog], posts: [.batch], postsEndingIn: ResourcePath.batch) : signedIn
            try routes.register(collection: ResourceController(resource: resource))
        }
    }
}
