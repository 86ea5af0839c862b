import Vapor

func routes(_ app: Application) throws {
    try app.register(collection: HealthController())
    try app.register(collection: MetricsController())
    let api = app.grouped("api", "v1")
    try api.register(collection: SessionRoutes())
    try api.register(collection: PasswordRoutes())
    try api.register(collection: SignUpRoutes())
    try api.register(collection: AccountSettingsRoutes())
    try api.register(collection: ChildrenRoutes())
    try api.register(collection: CatalogController())
    try api.register(collection: LibraryController())
    try api.register(collection: HistoryController())
    try api.register(collection: InsightsController())
    try api.register(collection: LibraryTransferController())
    try api.register(collection: CatalogCalendarController())
    try api.register(collection: ControlsController())
    try api.register(collection: AccountController())
    try app.register(collection: AccountLinkPages())
    try ConsoleRoutes.register(on: app)
}
