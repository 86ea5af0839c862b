import Foundation

/// The age picker of the catalog screen (the plan's §2.1 and §6.3); a range maps to the API's
/// `age` parameter by its lower bound.
public enum AgeRange: String, CaseIterable, Sendable {
    case all = "All Ages"
    case toddler = "0-2"
    case preschool = "2-4"
    case earlyReader = "4-6"
    case reader = "6-8"
    case olderReader = "8+"

    /// The `age` the API is sent: the range's lower bound; nil for all ages.
    public var age: Int? {
        switch self {
        case .all: return nil
        case .toddler: return 0
        case .preschool: return 2
        case .earlyReader: return 4
        case .reader: return 6
        case .olderReader: return 8
        }
    }
}

/// What the catalog screen asks for (the plan's §6.3).
public struct CatalogFilterState: Equatable, Sendable {
    public var query: String = ""
    public var ageRange: AgeRange? = nil
    public var categorySlug: String? = nil
    public var currentPage: Int = 1
    public var perPage: Int = 20
    /// The child whose family controls narrow the catalog (the server applies them).
    public var childID: Int? = nil

    public init(query: String = "", ageRange: AgeRange? = nil, categorySlug: String? = nil, currentPage: Int = 1, perPage: Int = 20,
                childID: Int? = nil) {
        self.childID = childID
        self.query = query
        self.ageRange = ageRange
        self.categorySlug = categorySlug
        self.currentPage = currentPage
        self.perPage = perPage
    }

    /// The `q` sent: the query trimmed, nil when empty (an empty search with filters browses).
    public var searchText: String? {
        let trimmed = query.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    /// The `age` sent.
    public var age: Int? { ageRange?.age }

    /// The same filter from page 1 (a new query or filter starts over).
    public var reset: CatalogFilterState {
        var state = self
        state.currentPage = 1
        return state
    }

    /// Whether another page exists after `currentPage` (the plan's rule: stop when
    /// `page * per_page >= total_count`).
    public func hasPage(after page: Int, totalCount: Int) -> Bool {
        page * perPage < totalCount
    }
}
