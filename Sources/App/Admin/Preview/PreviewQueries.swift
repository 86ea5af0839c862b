import SQLKit

/// The preview's statement: the categories its filters offer (the catalog itself comes from the engine).
enum PreviewQueries {
    struct Category: Decodable { let id: Int; let slug: String; let name: String }

    /// Every category, in display order.
    static func categories(on sql: any SQLDatabase) async throws -> [Category] {
        try await sql.raw("SELECT id, slug, name FROM categories ORDER BY display_order, name").all(decoding: Category.self)
    }
}
