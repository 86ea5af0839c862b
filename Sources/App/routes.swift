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
    // its routes on: anyone; a signed-in account, parent or caregiver (a child device's token is
    // the 403 `parent_only`); a parent of the family for changes (a caregiver reads, and changes
    // are the 403 `parent_role_required`); a signed-in account or a child device (the catalog,
    // the PIN that unlocks the parent gate).
    let member = api.grouped(ParentAuthMiddleware())
    let groups = APIRoutes(anyone: api, parent: member, familyParent: member.grouped(FamilyRoleMiddleware(rule: .writes)),
                           parentOrChildDevice: api.grouped(ParentAuthMiddleware(childDevices: true)))
    let features: [any APIRouteCollection] = [
        SessionRoutes(), PasswordRoutes(), SignUpRoutes(), AccountSettingsRoutes(), AccountController(), MePINRoutes(), MeDevicesRoutes(),
        CatalogController(), CatalogCalendarController(), ParentGateRoutes(), ChildrenRoutes(), FamilyRoutes(),
    ]
    for feature in features { try feature.boot(api: groups) }

    // One of the children of the caller's family — or the child of a child device: checked once
    // here, read by handlers as `req.child`. Each feature says which of its routes a child device
    // may use, and which a caregiver may change.
    let child = groups.parentOrChildDevice.grouped("children", ":child_id").grouped(OwnedChildMiddleware())
    let adult = child.grouped(ParentOnlyMiddleware())
    let childRoutes = ChildRoutes(family: child, parent: adult.grouped(FamilyRoleMiddleware(rule: .writes)),
                                  parentAlways: adult.grouped(FamilyRoleMiddleware(rule: .always)),
                                  answerer: adult.grouped(FamilyRoleMiddleware(rule: .answers)))
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
    /// Any signed-in account — a parent or a caregiver — about itself (not a child device).
    let parent: any RoutesBuilder
    /// A parent of the family for changes; a caregiver may read.
    let familyParent: any RoutesBuilder
    let parentOrChildDevice: any RoutesBuilder
}

/// A feature's routes about one child, booted on the `children/:child_id` group.
protocol ChildRouteCollection {
    func boot(child: ChildRoutes) throws
}

/// The `children/:child_id` group, by who may use it: a child device of that child and any member
/// (`family`); members but not a child device (the 403 `parent_only`), where a caregiver reads
/// and only a parent changes (`parent`: a caregiver's change is the 403 `parent_role_required`);
/// a parent only, reads too (`parentAlways`); a parent or a caregiver allowed to answer the
/// child's requests (`answerer`).
struct ChildRoutes {
    let family: any RoutesBuilder
    let parent: any RoutesBuilder
    let parentAlways: any RoutesBuilder
    let answerer: any RoutesBuilder
}
