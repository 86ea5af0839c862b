import Vapor

func routes(_ app: Application) throws {
    try app.register(collection: HealthController())
    let api = app.grouped("api", "v1")
    try api.register(collection: TokenController())
    try api.register(collection: CatalogController())
    try api.register(collection: LibraryController())
    try AdminRoutes.register(on: app)
}
