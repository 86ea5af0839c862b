import SQLKit
import Vapor

/// The book object of the parent API (docs/api.md).
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
    @ExplicitNull var coverImageUrl: String?
    /// An uploaded cover's size, colour and renditions (`CoverDTO`); null without one.
    @ExplicitNull var cover: CoverDTO?
    @ExplicitNull var publisher: Publisher?
    let categories: [Category]
    let status: String
    @ExplicitNull var durationSeconds: Int?
    let hasCaptions: Bool
    let rightsAvailable: Bool
    /// The language of a translated title shown (not encoded): what highlights stem it in.
    var titleLanguage: String? = nil

    enum CodingKeys: String, CodingKey {
        case id, title, author, description, ageMin, ageMax, language, coverImageUrl, cover, publisher, categories, status
        case durationSeconds, hasCaptions, rightsAvailable
    }


    /// The columns `BookDTO(row:)` reads, for a query over `books b` whose publisher is `p`
    /// and video asset `v` (both LEFT JOINed). Categories come in one JSON column.
    /// Rights availability is evaluated in `country` at `now` (the app's clock); text in `locales`.
    static func columns(country: String?, at now: Date, locales: [String] = []) -> SQLQueryString {
        """
        b.id, \(BookSQL.localized("title", locales: locales)), b.author, \(BookSQL.localized("description", locales: locales)), b.age_min, b.age_max, b.language, b.cover_image_url, b.status,
        p.id AS publisher_id, p.name AS publisher_name,
        \(BookSQL.readyDuration("v")) AS duration_seconds,
        COALESCE(v.has_captions, false) AS has_captions,
        \(BookSQL.rightsAvailable("b", in: country, at: now)) AS rights_available,
        (SELECT bcv.api_json FROM book_covers bcv WHERE bcv.book_id = b.id) AS cover_json,
        (SELECT COALESCE(json_agg(json_build_object('id', c.id, 'name', \(BookSQL.categoryName(locales: locales)), 'slug', c.slug)
                                  ORDER BY c.display_order, c.name, c.id), '[]')::text
           FROM book_categories bc JOIN categories c ON c.id = bc.category_id
          WHERE bc.book_id = b.id) AS categories_json\(BookSQL.titleLanguage(locales: locales))
        """
    }

    static let joins: SQLQueryString = """
        LEFT JOIN publishers p ON p.id = b.publisher_id
        LEFT JOIN video_assets v ON v.book_id = b.id
        """

    /// A row of `columns(country:)`, as the statement returns it.
    struct Row: Decodable {
        let id: Int
        let title, author, description: String
        let ageMin, ageMax: Int
        let language: String
        let coverImageUrl, coverJson: String?
        let status: String
        let publisherId: Int?
        let publisherName: String?
        let durationSeconds: Int?
        let hasCaptions, rightsAvailable: Bool
        let categoriesJson: String
        let titleLanguage: String?
    }

    /// The book of a row holding `columns(country:)` (other columns beside them are ignored).
    init(row: any SQLRow) throws {
        try self.init(try row.decode(model: Row.self, keyDecodingStrategy: .convertFromSnakeCase))
    }

    init(_ row: Row) throws {
        id = row.id
        title = row.title
        author = row.author
        description = row.description
        ageMin = row.ageMin
        ageMax = row.ageMax
        language = row.language
        coverImageUrl = row.coverImageUrl
        cover = try row.coverJson.map { try Self.coverDecoder.decode(CoverDTO.self, from: Data($0.utf8)) }
        status = row.status
        if let publisherID = row.publisherId {
            guard let name = row.publisherName else {
                throw DecodingError.valueNotFound(String.self, .init(codingPath: [], debugDescription: "publisher_name is null"))
            }
            publisher = Publisher(id: publisherID, name: name)
        } else {
            publisher = nil
        }
        durationSeconds = row.durationSeconds
        hasCaptions = row.hasCaptions
        rightsAvailable = row.rightsAvailable
        titleLanguage = row.titleLanguage
        categories = try JSONDecoder().decode([Category].self, from: Data(row.categoriesJson.utf8))
    }

    private static let coverDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()
}
