// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "flagpole",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "flagpole", targets: ["flagpole"]),
        .library(name: "FlagpoleCore", targets: ["FlagpoleCore"]),
        .library(name: "FlagpoleStore", targets: ["FlagpoleStore"]),
        .library(name: "FlagpoleServer", targets: ["FlagpoleServer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
    ],
    targets: [
        // The contract of features.json: parse, validate, render. Foundation only.
        .target(name: "FlagpoleCore"),

        // The SQL files of Migrations/, compiled into the binary so that the schema
        // never depends on the working directory.
        .target(
            name: "FlagpoleMigrations",
            path: "Migrations",
            resources: [
                .embedInCode("0001_initial.sql"),
                .embedInCode("0002_assignments.sql"),
            ]
        ),

        .target(
            name: "FlagpoleStore",
            dependencies: [
                "FlagpoleCore",
                "FlagpoleMigrations",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for the per-user hot paths (see RawStatement.swift).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        .target(
            name: "FlagpoleServer",
            dependencies: [
                "FlagpoleCore",
                "FlagpoleStore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CompressNIO", package: "compress-nio"),
            ]
        ),
        .executableTarget(
            name: "flagpole",
            dependencies: [
                "FlagpoleCore",
                "FlagpoleStore",
                "FlagpoleServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            resources: [
                .embedInCode("Resources/example-features.json"),
            ]
        ),

        .testTarget(
            name: "FlagpoleCoreTests",
            dependencies: ["FlagpoleCore"]
        ),
        .testTarget(
            name: "FlagpoleStoreTests",
            dependencies: ["FlagpoleStore", "FlagpoleCore"]
        ),
        .testTarget(
            name: "FlagpoleServerTests",
            dependencies: ["FlagpoleServer", "FlagpoleStore", "FlagpoleCore"]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["FlagpoleCore", "flagpole"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
