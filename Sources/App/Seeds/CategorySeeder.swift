import SQLKit
import Vapor

/// Upserts the category list of `seeds/categories.json` by slug.
enum CategorySeeder {
    struct Seed: Codable, Sendable, Equatable {
        let name: String
        let slug: String
        let displayOrder: Int
        let iconName: String?
        /// Names in other locales (docs/localization.md): filled where missing, never overwritten.
        var names: [String: String]? = nil
    }

    struct Result: Sendable, Equatable {
        var created: [String] = []
        var updated: [String] = []
        var unchanged = 0
        /// Translated names added (missing ones only: a staff edit stays).
        var translated = 0
        var summary: String {
            let names = translated > 0 ? " \(translated) translated names added." : ""
            if created.isEmpty && updated.isEmpty {
                return "Categories are up to date: \(unchanged) unchanged, nothing created." + names
            }
            var parts: [String] = []
            if !created.isEmpty { parts.append("created \(created.count) (\(created.joined(separator: ", ")))") }
            if !updated.isEmpty { parts.append("updated \(updated.count) (\(updated.joined(separator: ", ")))") }
            parts.append("\(unchanged) unchanged")
            return "Categories: " + parts.joined(separator: ", ") + "." + names
        }
    }

    static func load(directory: String) throws -> [Seed] {
        let path = directory + "/categories.json"
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Abort(.internalServerError, reason: "cannot read \(path)")
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode([Seed].self, from: data)
    }

    /// One statement for all rows: they land together or not at all. Translated names are
    /// inserted where the category has none in that locale (staff edits are kept).
    static func upsert(_ seeds: [Seed], on sql: any SQLDatabase) async throws -> Result {
        let names = seeds.flatMap { seed in (seed.names ?? [:]).sorted { $0.key < $1.key }.map { (slug: seed.slug, locale: $0.key, name: $0.value) } }
        let rows = try await sql.raw("""
            WITH input AS (
                SELECT * FROM unnest(\(bind: seeds.map(\.name))::text[], \(bind: seeds.map(\.slug))::text[],
                                     \(bind: seeds.map(\.displayOrder))::int[], \(bind: seeds.map(\.iconName))::text[])
                         AS t(name, slug, display_order, icon_name)
            ), existing AS (
                SELECT c.slug FROM categories c JOIN input USING (slug)
                 WHERE (c.name, c.display_order, c.icon_name) IS NOT DISTINCT FROM (input.name, input.display_order, input.icon_name)
            ), written AS (
                INSERT INTO categories (name, slug, display_order, icon_name)
                SELECT name, slug, display_order, icon_name FROM input
                 WHERE slug NOT IN (SELECT slug FROM existing)
                ON CONFLICT (slug) DO UPDATE
                   SET name = EXCLUDED.name, display_order = EXCLUDED.display_order, icon_name = EXCLUDED.icon_name
                RETURNING id, slug, (xmax = 0) AS inserted
            ), named AS (
                INSERT INTO category_translations (category_id, locale, name)
                SELECT COALESCE(w.id, c.id), n.locale, n.name
                  FROM unnest(\(bind: names.map(\.slug))::text[], \(bind: names.map(\.locale))::text[], \(bind: names.map(\.name))::text[]) AS n(slug, locale, name)
                  LEFT JOIN written w ON w.slug = n.slug LEFT JOIN categories c ON c.slug = n.slug
                ON CONFLICT (category_id, locale) DO NOTHING
                RETURNING 1
            )
            SELECT slug, inserted, (SELECT count(*) FROM named) AS translated FROM written
            UNION ALL SELECT slug, NULL, (SELECT count(*) FROM named) FROM existing
            """).all(decoding: Written.self)
        var result = Result()
        result.translated = rows.first?.translated ?? 0
        for row in rows {
            let slug = row.slug
            switch row.inserted {
            case true?: result.created.append(slug)
            case false?: result.updated.append(slug)
            case nil: result.unchanged += 1
            }
        }
        return result
    }

    /// A category the upsert wrote (`inserted` true: new, false: changed) or left (nil).
    private struct Written: Decodable { let slug: String; let inserted: Bool?; let translated: Int }
}
