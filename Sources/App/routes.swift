import Vapor

/// Every route of the app, by who may call it.
func routes(_ app: Application) throws {
    try app.register(collection: HealthController())
    try app.register(collection: MetricsController())
    try app.register(collection: AccountLinkPages())
    try app.register(collection: VideoWebhookController())
    try app.register(collection: CoversController())
    let api = app.grouped("api", "v1")

    // Anyone, or a route that authenticates parents itself (sign-in, the catalog's public parts).
    try api.register(collection: SessionRoutes())
    try api.register(collection: PasswordRoutes())
    try api.register(collection: SignUpRoutes())
    try api.register(collection: AccountSettingsRoutes())
    try api.register(collection: CatalogController())
    try api.register(collection: CatalogCalendarController())
    try api.register(collection: AccountController())
    try api.register(collection: ParentGateRoutes())

    // A signed-in parent (a child device's token is the 403 `parent_only` here).
    let parent = api.grouped(ParentAuthMiddleware())
    try parent.register(collection: ChildrenRoutes())

    // One of the signed-in parent's children — or the child of a child device: checked once here,
    // read by handlers as `req.child`. Each feature says which of its routes a child device may use.
    let child = api.grouped(ParentAuthMiddleware(childDevices: true)).grouped("children", ":child_id").grouped(OwnedChildMiddleware())
    let childRoutes = ChildRoutes(family: child, parent: child.grouped(ParentOnlyMiddleware()))
    let childFeatures: [any ChildRouteCollection] = [
        ChildrenRoutes(), LibraryController(), LibraryTransferController(), HistoryController(),
        InsightsController(), ControlsController(), ChildDevicesRoutes(), BookRequestsController(), ChildExportController(),
        PlaybackController(),
    ]
    for feature in childFeatures { try feature.boot(child: childRoutes) }

    try ConsoleRoutes.register(on: app)
}

/// A feature's routes about one child, booted on the `children/:child_id` group.
protocol ChildRouteCollection {
    func boot(child: ChildRoutes) throws
}

/// The `children/:child_id` group, twice: what a child device of that child may use too, and what
/// only a parent may (a child device gets the 403 `parent_only`, the same for every such route).
struct ChildRoutes {
    let family: any RoutesBuilder
    let parent: any RoutesBuilder
}
