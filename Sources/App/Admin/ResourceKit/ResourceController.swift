import Vapor

/// The shared machinery: list, filter, sort, paginate, export, batch, create, show, edit, delete
/// and audit for any declared `AdminResource` (the handlers are in the `ResourceController+…` files;
/// every statement goes through `ResourceStore`).
struct ResourceController: RouteCollection, Sendable {
    let resource: AdminResource

    func boot(routes: any RoutesBuilder) throws {
        var base: [PathComponent] = []
        // A nested resource's parent id takes the name the parent's own routes use (":id"):
        // the router needs one parameter name per position.
        if let parent = resource.access.parent { base = [.constant(parent.slug), .parameter("id")] }
        base.append(.constant(resource.slug))
        let id: PathComponent = .parameter(idParameter)
        routes.get(base, use: list)
        routes.get(base + [.constant(ResourcePath.export)], use: export)
        routes.post(base + [.constant(ResourcePath.batch)], use: batch)
        routes.get(base + [.constant(ResourcePath.new)], use: new)
        routes.post(base, use: create)
        routes.get(base + [id], use: show)
        routes.get(base + [id, .constant(ResourcePath.edit)], use: edit)
        routes.post(base + [id], use: update)
        routes.get(base + [id, .constant(ResourcePath.delete)], use: confirmDelete)
        routes.post(base + [id, .constant(ResourcePath.delete)], use: delete)
    }

    // MARK: - Request parts

    private var idParameter: String { resource.access.parent == nil ? "id" : "record_id" }

    /// The store for this request: the parent from the path (404 when it does not exist).
    func store(_ req: Request) async throws -> ResourceStore {
        let zone = req.adminSession.user?.timeZone ?? "UTC"
        guard let parent = resource.access.parent else { return ResourceStore(resource: resource, parentID: nil, sql: req.sql, timeZone: zone) }
        let store = ResourceStore(resource: resource, parentID: req.parameters.get("id").flatMap(Int.init), sql: req.sql, timeZone: zone)
        guard let id = store.parentID, id > 0, try await store.parentName() != nil else {
            throw Abort(.notFound, reason: "No such \(parent.label.lowercased()).")
        }
        return store
    }

    func paths(_ store: ResourceStore) -> ResourcePath { ResourcePath(resource, parentID: store.parentID) }

    func recordID(_ req: Request) throws -> Int {
        guard let id = req.parameters.get(idParameter).flatMap(Int.init), id > 0 else { throw notFound }
        return id
    }

    var notFound: Abort { Abort(.notFound, reason: "No such \(resource.singular.lowercased()).") }

    /// Resources for admins only (staff) are hidden from everyone else, reads included.
    func requireReader(_ req: Request) throws {
        if resource.access.requiresAdmin { try req.requireAdmin() }
    }

    func requireWriter(_ req: Request) throws {
        if resource.access.requiresAdmin { try req.requireAdmin() } else { try req.requireEditor() }
    }

    func canWrite(_ staff: StaffUser) -> Bool { resource.access.requiresAdmin ? staff.isAdmin : staff.canEdit }
}
