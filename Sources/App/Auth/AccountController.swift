import Core
import SQLKit
import Vapor

/// `GET /api/v1/me` and `PATCH /api/v1/me {"time_zone", "country"}`: the signed-in parent, the time
/// zone family controls read days and bedtimes in, and the country whose rights windows apply.
struct AccountController: RouteCollection {
    func boot(routes: any RoutesBuilder) throws {
        let me = routes.grouped(ParentAuthMiddleware()).grouped("me")
        me.get(use: show)
        me.patch(use: update)
    }

    struct MeDTO: Content {
        let id: Int
        let email: String
        let emailVerified: Bool
        let timeZone: String
        let country: String
    }

    @Sendable
    func show(req: Request) async throws -> ItemDTO<MeDTO> {
        ItemDTO(data: try await Self.me(req))
    }

    @Sendable
    func update(req: Request) async throws -> ItemDTO<MeDTO> {
        let body = try JSONBody(req)
        // Both fields are checked before either is changed: bad input changes nothing.
        var country: String?
        if body.has("country") {
            let text = try body.string("country", maxLength: 2)
            guard case .success(let codes) = Territories.parse(text), codes.count == 1 else {
                throw Problem.invalidParameter("country", "country must be an ISO 3166-1 alpha-2 code such as FR or US")
            }
            country = codes[0]
        }
        var zone: String?
        if body.has("time_zone") {
            zone = try body.string("time_zone", maxLength: 64)
            guard try await req.appServices.timeZoneNames.isFamilyZone(zone!, on: req.sql) else {
                throw Problem.invalidParameter("time_zone", "time_zone must be an IANA time zone name such as Europe/Paris")
            }
        }
        let parent = try req.parentID
        try await req.transaction { [zone, country] sql in
            if let zone { try await Self.set("time_zone", to: zone, of: parent, on: sql) }
            if let country { try await Self.set("country", to: country, of: parent, on: sql) }
        }
        return ItemDTO(data: try await Self.me(req))
    }

    /// Sets one of the parent's own settings and audits it (`account.<column>`, before → after).
    private static func set(_ column: StaticString, to value: String, of parent: Int, on sql: any SQLDatabase) async throws {
        let name = column.description
        try await sql.raw("""
            WITH old AS (SELECT \(ident: name) AS value FROM parents WHERE id = \(bind: parent) FOR UPDATE),
            changed AS (UPDATE parents SET \(ident: name) = \(bind: value), updated_at = now() WHERE id = \(bind: parent) RETURNING id)
            INSERT INTO parent_audit_log (parent_id, action, before, after)
            SELECT \(bind: parent), \(bind: "account." + name), jsonb_build_object(\(bind: name)::text, old.value), jsonb_build_object(\(bind: name)::text, \(bind: value)::text)
              FROM old, changed
            """).run()
    }

    private static func me(_ req: Request) async throws -> MeDTO {
        guard let row = try await req.sql.raw("SELECT id, email, email_verified_at IS NOT NULL AS verified, time_zone, country FROM parents WHERE id = \(bind: try req.parentID)").first() else {
            throw Problem.unauthorized
        }
        return MeDTO(id: try row.decode(column: "id", as: Int.self), email: try row.decode(column: "email", as: String.self),
                     emailVerified: try row.decode(column: "verified", as: Bool.self),
                     timeZone: try row.decode(column: "time_zone", as: String.self),
                     country: try row.decode(column: "country", as: String?.self) ?? req.application.settings.defaultCountry)
    }
}
