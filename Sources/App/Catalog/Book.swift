import SQLKit
import Vapor

/// The book object of the parent API (CONTRACT §5).
struct BookDTO: Content, Sendable, Equatable {
    struct Publisher: Codable, Sendable, Equatable { let id: Int; let name: String }
    struct Category: Codable, Sendable, Equatable { let id: Int; let name: String; let slug: String }

    let id: Int
    let title: String
    let author: String
    let description: String
    let ageMin: Int
    let ageMax: Int
    let language: String
    let coverImageUrl: String?
    let publisher: Publisher?
    let categories: [Category]
    let status: String
    let durationSeconds: Int?
    let hasCaptions: Bool
    let rightsAvailable: Bool

    enum CodingKeys: String, CodingKey {
        case id, title, author, description, ageMin, ageMax, language, coverImageUrl, publisher, categories, status
        case durationSeconds, hasCaptions, rightsAvailable
    }

    /// Absent values are written as `null`, as the contract shows, never left out.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(title, forKey: .title)
        try container.encode(author, forKey: .author)
        try container.encode(description, forKey: .description)
        try container.encode(ageMin, forKey: .ageMin)
        try container.encode(ageMax, forKey: .ageMax)
        try container.encode(language, forKey: .language)
        try container.encode(coverImageUrl, forKey: .coverImageUrl)
        try container.encode(publisher, forKey: .publisher)
        try container.encode(categories, forKey: .categories)
        try container.encode(status, forKey: .status)
        try container.encode(durationSeconds, forKey: .durationSeconds)
        try container.encode(hasCaptions, forKey: .hasCaptions)
        try container.encode(rightsAvailable, forKey: .rightsAvailable)
    }

    /// The columns `BookDTO(row:)` reads, for a query over `books b` whose publisher is `p`
    /// and video asset `v` (both LEFT JOINed). Categories come in one JSON column.
    /// Rights availability is evaluated in `country`.
    static func columns(country: String?) -> SQLQueryString {
        """
        b.id, b.title, b.author, b.description, b.age_min, b.age_max, b.language, b.cover_image_url, b.status,
        p.id AS publisher_id, p.name AS publisher_name,
        \(BookSQL.readyDuration("v")) AS duration_seconds,
        COALESCE(v.has_captions, false) AS has_captions,
        \(BookSQL.rightsAvailable("b", in: country)) AS rights_available,
        (SELECT COALESCE(json_agg(json_build_object('id', c.id, 'name', c.name, 'slug', c.slug)
                                  ORDER BY c.display_order, c.name, c.id), '[]')::text
           FROM book_categories bc JOIN categories c ON c.id = bc.category_id
          WHERE bc.book_id = b.id) AS categories_json
        """
    }

    static let joins: SQLQueryString = """
        LEFT JOIN publishers p ON p.id = b.publisher_id
        LEFT JOIN video_assets v ON v.book_id = b.id
        """

    init(row: any SQLRow) throws {
        id = try row.decode(column: "id", as: Int.self)
        title = try row.decode(column: "title", as: String.self)
        author = try row.decode(column: "author", as: String.self)
        description = try row.decode(column: "description", as: String.self)
        ageMin = try row.decode(column: "age_min", as: Int.self)
        ageMax = try row.decode(column: "age_max", as: Int.self)
        language = try row.decode(column: "language", as: String.self)
        coverImageUrl = try row.decode(column: "cover_image_url", as: String?.self)
        status = try row.decode(column: "status", as: String.self)
        if let publisherID = try row.decode(column: "publisher_id", as: Int?.self) {
            publisher = Publisher(id: publisherID, name: try row.decode(column: "publisher_name", as: String.self))
        } else {
            publisher = nil
        }
        durationSeconds = try row.decode(column: "duration_seconds", as: Int?.self)
        hasCaptions = try row.decode(column: "has_captions", as: Bool.self)
        rightsAvailable = try row.decode(column: "rights_available", as: Bool.self)
        let json = try row.decode(column: "categories_json", as: String.self)
        categories = try JSONDecoder().decode([Category].self, from: Data(json.utf8))
    }
}

/// The list envelope: `{"data": [...], "meta": {...}}`.
struct PageDTO<Item: Content>: Content {
    struct Meta: Content { let page: Int; let perPage: Int; let totalCount: Int; let totalPages: Int }
    let data: [Item]
    let meta: Meta
}

/// The catalog list envelope: the list envelope plus `meta.facets`.
struct CatalogPageDTO: Content {
    struct Meta: Content { let facets: FacetsDTO; let page: Int; let perPage: Int; let totalCount: Int; let totalPages: Int }
    let data: [BookDTO]
    let meta: Meta
}

struct ItemDTO<Item: Content>: Content {
    let data: Item
}
