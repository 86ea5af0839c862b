import Vapor

/// Every route of the app, by who may call it.
func routes(_ app: Application) throws {
    try app.register(collection: HealthController())
    try app.register(collection: MetricsController())
    try app.register(collection: AccountLinkPages())
    let api = app.grouped("api", "v1")

    // Anyone, or a route that authenticates parents itself (sign-in, the catalog's public parts).
    try api.register(collection: SessionRoutes())
    try api.register(collection: PasswordRoutes())
    try api.register(collection: SignUpRoutes())
    try api.register(collection: AccountSettingsRoutes())
    try api.register(collection: CatalogController())
    try api.register(collection: CatalogCalendarController())
    try api.register(collection: AccountController())

    // A signed-in parent.
    let parent = api.grouped(ParentAuthMiddleware())
    try parent.register(collection: ChildrenRoutes())

    // One of the signed-in parent's children: checked once here, read by handlers as `req.child`.
    let child = parent.grouped("children", ":child_id").grouped(OwnedChildMiddleware())
    let childFeatures: [any ChildRouteCollection] = [
        ChildrenRoutes(), LibraryController(), LibraryTransferController(), HistoryController(),
        InsightsController(), ControlsController(),
    ]
    for feature in childFeatures { try feature.boot(child: child) }

    try ConsoleRoutes.register(on: app)
}

/// A feature's routes about one child, booted on the `children/:child_id` group.
protocol ChildRouteCollection {
    func boot(child: any RoutesBuilder) throws
}
