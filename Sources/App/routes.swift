import Vapor

/// Every route of the app, by who may call it.
func routes(_ app: Application) throws {
    try app.register(collection: HealthController())
    try app.register(collection: MetricsController())
    try app.register(collection: AccountLinkPages())
    try app.register(collection: VideoWebhookController())
    try app.register(collection: CoversController())
    let api = app.grouped("api", "v1")

    // Who may call each route of the parent API is decided here, by the group a feature boots
    // its routes on: anyone; a signed-in parent (a child device's token is the 403 `parent_only`);
    // a signed-in parent or a child device (the catalog, the PIN that unlocks the parent gate).
    let groups = APIRoutes(anyone: api, parent: api.grouped(ParentAuthMiddleware()),
                           parentOrChildDevice: api.grouped(ParentAuthMiddleware(childDevices: true)))
    let features: [any APIRouteCollection] = [
        SessionRoutes(), PasswordRoutes(), SignUpRoutes(), AccountSettingsRoutes(), AccountController(),
        CatalogController(), CatalogCalendarController(), ParentGateRoutes(), ChildrenRoutes(),
    ]
    for feature in features { try feature.boot(api: groups) }

    // One of the signed-in parent's children — or the child of a child device: checked once here,
    // read by handlers as `req.child`. Each feature says which of its routes a child device may use.
    let child = groups.parentOrChildDevice.grouped("children", ":child_id").grouped(OwnedChildMiddleware())
    let childRoutes = ChildRoutes(family: child, parent: child.grouped(ParentOnlyMiddleware()))
    let childFeatures: [any ChildRouteCollection] = [
        ChildrenRoutes(), LibraryController(), LibraryTransferController(), HistoryController(),
        InsightsController(), ControlsController(), ChildDevicesRoutes(), BookRequestsController(), ChildExportController(),
        PlaybackController(),
    ]
    for feature in childFeatures { try feature.boot(child: childRoutes) }

    try ConsoleRoutes.register(on: app)
}

/// A feature's routes of the parent API outside a child's group, booted on the groups of
/// `routes.swift`; a feature never adds authentication itself.
protocol APIRouteCollection {
    func boot(api: APIRoutes) throws
}

/// The parent API's groups, by who may call them.
struct APIRoutes {
    let anyone: any RoutesBuilder
    let parent: any RoutesBuilder
    let parentOrChildDevice: any RoutesBuilder
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
