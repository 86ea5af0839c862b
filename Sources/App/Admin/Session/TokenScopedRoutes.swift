import Vapor

/// Which staff API token scopes may call a console route, declared where routes are grouped
/// (`ConsoleRoutes`) and kept on the route itself; `StaffAuthMiddleware` reads them from the route
/// the router matched — never from the request's URL, so `/admin//account/tokens` is the account
/// route and refuses tokens like it. A route declared nowhere refuses every token.
struct TokenScopedRoutes: RoutesBuilder {
    static let key = "storytime.tokenScopes"

    let root: any RoutesBuilder
    /// Scopes allowed to read (GET, and so HEAD).
    let reads: Set<StaffTokens.Scope>
    /// Scopes allowed to post, and to which posts: those whose last path segment is `postsEndingIn`, or all when nil.
    let posts: Set<StaffTokens.Scope>
    let postsEndingIn: String?

    func add(_ route: Route) {
        var scopes: Set<StaffTokens.Scope> = []
        if route.method == .GET || route.method == .HEAD {
            scopes = reads
        } else if route.method == .POST {
            if let last = postsEndingIn {
                if case .constant(last)? = route.path.last { scopes = posts }
            } else {
                scopes = posts
            }
        }
        if !scopes.isEmpty { route.userInfo[Self.key] = scopes.union(Self.scopes(of: route)) }
        root.add(route)
    }

    /// The scopes declared for `route` (none: tokens are refused).
    static func scopes(of route: Route?) -> Set<StaffTokens.Scope> {
        route?.userInfo[key] as? Set<StaffTokens.Scope> ?? []
    }
}

extension RoutesBuilder {
    /// This group's routes as staff API tokens may call them: reads with `reads`, posts (all, or
    /// only those ending in `postsEndingIn`) with `posts`. Routes not grouped so refuse tokens.
    func tokens(reads: Set<StaffTokens.Scope>, posts: Set<StaffTokens.Scope> = [], postsEndingIn: String? = nil) -> any RoutesBuilder {
        TokenScopedRoutes(root: self, reads: reads, posts: posts, postsEndingIn: postsEndingIn)
    }
}

extension AdminResource {
    /// The catalog's resources: what `read_catalog` reads and `batch` changes. Named one by one, so
    /// a new resource (families, staff, webhooks are not here) refuses tokens until it is added.
    static let catalogSlugs: Set<String> = Set([AdminResource.books, .categories, .publishers, .rightsWindows, .videoAssets, .synonyms].map(\.slug))

    var isCatalog: Bool { Self.catalogSlugs.contains(slug) }
}
