import Core
import SQLKit

extension AdminResource {
    static let videoStatuses = [Choice(value: "pending", label: "Pending"), Choice(value: "processing", label: "Processing"),
                                Choice(value: "ready", label: "Ready"), Choice(value: "failed", label: "Failed")]

    static let bookSearch = AdminSearch(label: "Search title or author") { q in
        let words = SearchText.words(q)
        guard !words.isEmpty else { return nil }
        return "t.search_vector @@ \(bind: SearchText.tsquery(words.map { [$0] }, weights: "AB"))::tsquery"
    }

    static let bookFilters = [
        AdminFilter(name: "status", label: "Status", kind: .choices(bookStatuses)) { value in
            bookStatuses.contains { $0.value == value } ? "t.status = \(bind: value)" : nil
        },
        AdminFilter(name: "publisher", label: "Publisher", kind: .lookup(.publishers)) { value in
            Lookup.publishers.condition("t.publisher_id", value)
        },
        AdminFilter(name: "category", label: "Category", kind: .lookup(.categories)) { value in
            Int(value).map { "EXISTS (SELECT 1 FROM book_categories bc WHERE bc.book_id = t.id AND bc.category_id = \(bind: $0))" }
        },
        AdminFilter(name: "age", label: "Suitable for age", kind: .integer(0...18)) { value in
            Int(value).flatMap { (0...18).contains($0) ? "t.age_min <= \(bind: $0) AND t.age_max >= \(bind: $0)" : nil }
        },
        AdminFilter(name: "rights", label: "Rights now", kind: .choices([Choice(value: "available", label: "Available"),
                                                                        Choice(value: "unavailable", label: "Not available")])) { value in
            switch value {
            case "available": return "\(BookSQL.rightsAvailable("t"))"
            case "unavailable": return "NOT \(BookSQL.rightsAvailable("t"))"
            default: return nil
            }
        },
        AdminFilter(name: "video", label: "Video", kind: .choices(videoStatuses + [Choice(value: "none", label: "No video asset")])) { value in
            if value == "none" { return "NOT EXISTS (SELECT 1 FROM video_assets va WHERE va.book_id = t.id)" }
            return videoStatuses.contains { $0.value == value }
                ? "EXISTS (SELECT 1 FROM video_assets va WHERE va.book_id = t.id AND va.status = \(bind: value))" : nil
        },
    ]
}
