import SQLKit
import Vapor

/// Upserts the category list of `seeds/categories.json` by slug.
enum CategorySeeder {
    struct Seed: Codable, Sendable, Equatable {
        let name: String
        let slug: String
        let displayOrder: Int
        let iconName: String?
    }

    struct Result: Sendable, Equatable {
        var created: [String] = []
        var updated: [String] = []
        var unchanged = 0
        var summary: String {
            if created.isEmpty && updated.isEmpty {
                return "Categories are up to date: \(unchanged) unchanged, nothing created."
            }
            var parts: [String] = []
            if !created.isEmpty { parts.append("created \(created.count) (\(created.joined(separator: ", ")))") }
            if !updated.isEmpty { parts.append("updated \(updated.count) (\(updated.joined(separator: ", ")))") }
            parts.append("\(unchanged) unchanged")
            return "Categories: " + parts.joined(separator: ", ") + "."
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

    /// One statement for all rows: they land together or not at all.
    static func upsert(_ seeds: [Seed], on sql: any SQLDatabase) async throws -> Result {
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
                RETURNING slug, (xmax = 0) AS inserted
            )
            SELECT slug, inserted FROM written
            UNION ALL SELECT slug, NULL FROM existing
            """).all(decoding: Written.self)
        var result = Result()
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
    private struct Written: Decodable { let slug: String; let inserted: Bool? }
}
