import Core
import SQLKit
import Vapor

/// `GET /api/v1/me` and `PATCH /api/v1/me {"time_zone", "country"}`: the signed-in parent, the time
/// zone family controls read days and bedtimes in, and the country whose rights windows apply.
struct AccountController: APIRouteCollection {
    func boot(api: APIRoutes) throws {
        let me = api.parent.grouped("me")
        me.get(use: show)
        me.patch(use: update)
    }

    struct MeDTO: Content {
        let id: Int
        let email: String
        let emailVerified: Bool
        let timeZone: String
        let country: String
        /// The locale the catalog answers in when the app names none (docs/localization.md); null: the default.
        @ExplicitNull var preferredLocale: String?
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
        // preferred_locale: one of CATALOG_LOCALES, or null to clear it.
        var locale: String??
        if body.has("preferred_locale") {
            if body.isNull("preferred_locale") { locale = .some(nil) } else {
                let text = try body.string("preferred_locale", maxLength: 10)
                guard let matched = req.application.settings.catalogLocales.match(text) else {
                    throw Problem.invalidParameter("preferred_locale", "preferred_locale must be one of \(req.application.settings.catalogLocales.supported.joined(separator: ", ")), or null")
                }
                locale = matched
            }
        }
        var zone: String?
        if body.has("time_zone") {
            zone = try body.string("time_zone", maxLength: 64)
            guard try await req.appServices.timeZoneNames.isFamilyZone(zone!, on: req.sql) else {
                throw Problem.invalidParameter("time_zone", "time_zone must be an IANA time zone name such as Europe/Paris")
            }
        }
        let parent = try req.parentID
        try await req.transaction { [zone, country, locale] sql in
            if let locale { try await AccountQueries.setPreferredLocale(locale, of: parent, on: sql) }
            if let zone { try await AccountQueries.set("time_zone", to: zone, of: parent, on: sql) }
            if let country { try await AccountQueries.set("country", to: country, of: parent, on: sql) }
        }
        return ItemDTO(data: try await Self.me(req))
    }

    private static func me(_ req: Request) async throws -> MeDTO {
        guard let me = try await AccountQueries.me(parent: try req.parentID, on: req.sql) else { throw Problem.unauthorized }
        return MeDTO(id: me.id, email: me.email, emailVerified: me.verified, timeZone: me.timeZone,
                     country: me.country ?? req.application.settings.defaultCountry, preferredLocale: me.preferredLocale)
    }
}
