// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "storytime",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .executable(name: "App", targets: ["App"]),
        // The parents' app client library: `.product(name: "StorytimeKit", package: "storytime")`.
        .library(name: "StorytimeKit", targets: ["StorytimeKit"]),
        .executable(name: "storytime", targets: ["StorytimeCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/vapor/vapor", from: "4.122.3"),
        .package(url: "https://github.com/vapor/fluent", from: "4.13.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver", from: "2.14.0"),
        .package(url: "https://github.com/vapor/leaf", from: "4.5.2"),
        .package(url: "https://github.com/vapor/jwt", from: "5.2.0"),
        .package(url: "https://github.com/vapor/sql-kit", from: "3.36.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-openapi-generator", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
        .package(url: "https://github.com/pointfreeco/swift-clocks", from: "1.1.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/adam-fowler/compress-nio", from: "1.5.0"),
    ],
    targets: [
        // Pure logic with no Vapor and no database: parameter parsing, search words, SQL scripts.
        .target(name: "Core", dependencies: ["CStemmer"], path: "Sources/Core"),
        // Snowball stemmers for search's word forms (`scripts/deps.sh` installs libstemmer-dev).
        .systemLibrary(name: "CStemmer", path: "Sources/CStemmer", providers: [.apt(["libstemmer-dev"])]),
        // The in-memory catalog index: bitsets, lexemes, orders, answers and what survives a
        // change. Pure Swift, no Vapor and no database; the app loads it and keeps it fresh.
        .target(name: "CatalogIndexing", dependencies: ["Core", "CPrefetch"], path: "Sources/CatalogIndexing"),
        // A memory prefetch hint for the index's counts (a C header: Swift has no such builtin).
        .systemLibrary(name: "CPrefetch", path: "Sources/CPrefetch"),
        // Brotli for compressed answers (`scripts/deps.sh` installs libbrotli-dev).
        .systemLibrary(name: "CBrotli", path: "Sources/CBrotli", pkgConfig: "libbrotlienc", providers: [.apt(["libbrotli-dev"])]),
        .executableTarget(
            name: "App",
            dependencies: [
                "Core",
                "CatalogIndexing",
                "CBrotli",
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "Fluent", package: "fluent"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
                .product(name: "Leaf", package: "leaf"),
                .product(name: "JWT", package: "jwt"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
            ],
            path: "Sources/App"
        ),
        // The client is generated at build time from `public/openapi.json` (the document the
        // server serves and is fuzzed against; `openapi.json` in the target is a link to it).
        .target(
            name: "StorytimeKit",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
            ],
            path: "Sources/StorytimeKit",
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        .executableTarget(name: "StorytimeCLI", dependencies: ["StorytimeKit"], path: "Sources/StorytimeCLI"),
        .testTarget(
            name: "AppTests",
            dependencies: [
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .target(name: "App"),
                "StorytimeKit",
                .product(name: "VaporTesting", package: "vapor"),
            ],
            path: "Tests/AppTests",
            exclude: ["Golden"]
        ),
        .testTarget(
            name: "StorytimeKitTests",
            dependencies: [
                "StorytimeKit",
                .product(name: "Clocks", package: "swift-clocks"),
            ],
            path: "Tests/StorytimeKitTests"
        ),
        .testTarget(name: "CoreTests", dependencies: ["Core"], path: "Tests/CoreTests"),
        .testTarget(name: "CatalogIndexingTests", dependencies: ["CatalogIndexing", "Core"], path: "Tests/CatalogIndexingTests"),
    ],
    swiftLanguageModes: [.v6]
)
