// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "storytime",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "App", targets: ["App"]),
    ],
    dependencies: [
        .package(url: "https://github.com/vapor/vapor", from: "4.122.3"),
        .package(url: "https://github.com/vapor/fluent", from: "4.13.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver", from: "2.14.0"),
        .package(url: "https://github.com/vapor/leaf", from: "4.5.2"),
        .package(url: "https://github.com/vapor/jwt", from: "5.2.0"),
        .package(url: "https://github.com/vapor/sql-kit", from: "3.36.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        // Pure logic with no Vapor and no database: parameter parsing, search words, SQL scripts.
        .target(name: "Core", path: "Sources/Core"),
        .executableTarget(
            name: "App",
            dependencies: [
                "Core",
                .product(name: "Vapor", package: "vapor"),
                .product(name: "Fluent", package: "fluent"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
                .product(name: "Leaf", package: "leaf"),
                .product(name: "JWT", package: "jwt"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Sources/App"
        ),
        .testTarget(
            name: "AppTests",
            dependencies: [
                .target(name: "App"),
                .product(name: "VaporTesting", package: "vapor"),
            ],
            path: "Tests/AppTests"
        ),
        .testTarget(name: "CoreTests", dependencies: ["Core"], path: "Tests/CoreTests"),
    ],
    swiftLanguageModes: [.v5]
)
