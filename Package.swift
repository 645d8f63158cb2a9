// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "flagpole",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "flagpole", targets: ["flagpole"]),
        .library(name: "FlagpoleCore", targets: ["FlagpoleCore"]),
        .library(name: "FlagpoleStore", targets: ["FlagpoleStore"]),
        .library(name: "FlagpoleServer", targets: ["FlagpoleServer"]),
        // For Scripts/fuzz.d, a package of its own: the property its harness checks lives here.
        .library(name: "FlagpoleTestSupport", targets: ["FlagpoleTestSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
        // Hummingbird's optional traits (swift-configuration, full Foundation) are unused: off keeps CI's build lean.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // Already under Hummingbird: named for the delivery fast path's channel handler.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // The dashboard: HTML templates, and the import page's file upload (multipart/form-data).
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/vapor/multipart-kit.git", from: "4.7.1"),
        // Publishing to object storage: S3's REST API over HTTP/1.1 and TLS (there is no AWS SDK for
        // Swift among the packages Flagpole builds with; requests are signed in FlagpolePublish/S3).
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // The shared database of several server instances (docs/POSTGRES.md).
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        // The contract of features.json: parse, validate, render. Foundation only.
        .target(name: "FlagpoleCore"),

        // The documents of docs/, compiled in like the migrations: the dashboard serves them.
        .target(
            name: "FlagpoleHandbook",
            path: "docs",
            resources: [
                .embedInCode("ARCHITECTURE.md"),
                .embedInCode("BUCKETEER.md"),
                .embedInCode("CHOICES.md"),
                .embedInCode("CLI.md"),
                .embedInCode("CONFIGS.md"),
                .embedInCode("DASHBOARD.md"),
                .embedInCode("DEPENDENCIES.md"),
                .embedInCode("DESIGN.md"),
                .embedInCode("DIAGNOSTICS.md"),
                .embedInCode("FORMAT.md"),
                .embedInCode("MEMBERS.md"),
                .embedInCode("OFREP.md"),
                .embedInCode("OVERVIEW.md"),
                .embedInCode("PERFORMANCE.md"),
                .embedInCode("POSTGRES.md"),
                .embedInCode("PUBLISHING.md"),
                .embedInCode("RAMPS.md"),
                .embedInCode("RELIABILITY.md"),
                .embedInCode("RESULTS.md"),
                .embedInCode("SERVER.md"),
                .embedInCode("TARGETING.md"),
                .embedInCode("WEBHOOKS.md"),
            ]
        ),
        // The SQL files of Migrations/ (SQLite's) and Migrations/PostgreSQL/, compiled into the
        // binary so that the schema never depends on the working directory.
        .target(
            name: "FlagpoleMigrations",
            path: "Migrations",
            resources: [
                .embedInCode("0001_initial.sql"),
                .embedInCode("0002_assignments.sql"),
                .embedInCode("0003_server.sql"),
                .embedInCode("0004_sessions.sql"),
                .embedInCode("0005_identity_and_history.sql"),
                .embedInCode("0006_deltas_kept_by_the_store.sql"),
                .embedInCode("0007_configs.sql"),
                .embedInCode("0008_publish_log.sql"),
                .embedInCode("0009_targeting.sql"),
                .embedInCode("0010_user_attributes.sql"),
                .embedInCode("0011_experiment_results.sql"),
                .embedInCode("0012_environment_marking.sql"),
                .embedInCode("0013_members.sql"),
                .embedInCode("0014_ramps.sql"),
                .embedInCode("0015_ramp_guards.sql"),
                .embedInCode("0016_fetches_and_webhooks.sql"),
                .embedInCode("0017_refused_event_batches.sql"),
                .embedInCode("0018_test_controls_and_session_browsers.sql"),
                .embedInCode("0019_webhook_events_and_change_sequence.sql"),
                .embedInCode("PostgreSQL/0001_initial.postgres.sql"),
                .embedInCode("PostgreSQL/0002_assignments.postgres.sql"),
                .embedInCode("PostgreSQL/0003_server.postgres.sql"),
                .embedInCode("PostgreSQL/0004_sessions.postgres.sql"),
                .embedInCode("PostgreSQL/0005_identity_and_history.postgres.sql"),
                .embedInCode("PostgreSQL/0006_deltas_kept_by_the_store.postgres.sql"),
                .embedInCode("PostgreSQL/0007_configs.postgres.sql"),
                .embedInCode("PostgreSQL/0008_publish_log.postgres.sql"),
                .embedInCode("PostgreSQL/0009_targeting.postgres.sql"),
                .embedInCode("PostgreSQL/0010_user_attributes.postgres.sql"),
                .embedInCode("PostgreSQL/0011_experiment_results.postgres.sql"),
                .embedInCode("PostgreSQL/0012_environment_marking.postgres.sql"),
                .embedInCode("PostgreSQL/0013_members.postgres.sql"),
                .embedInCode("PostgreSQL/0014_ramps.postgres.sql"),
                .embedInCode("PostgreSQL/0015_ramp_guards.postgres.sql"),
                .embedInCode("PostgreSQL/0016_fetches_and_webhooks.postgres.sql"),
                .embedInCode("PostgreSQL/0017_refused_event_batches.postgres.sql"),
                .embedInCode("PostgreSQL/0018_test_controls_and_session_browsers.postgres.sql"),
                .embedInCode("PostgreSQL/0019_webhook_events_and_change_sequence.postgres.sql"),
            ]
        ),

        .target(
            name: "FlagpoleStore",
            dependencies: [
                "FlagpoleCore",
                "FlagpoleMigrations",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SHA-256 of API keys.
                .product(name: "Crypto", package: "swift-crypto"),
                // scrypt, for members' passwords.
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                // SQLite's C API, for the per-user hot paths (see RawStatement.swift).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // PostgreSQL's connections: their event loops and buffers.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The documents as they leave Flagpole: delivery artifacts (bytes, SHA-256, gzip), the CDN
        // tree on disk, and publishing to S3-compatible object storage with its purge hook.
        .target(
            name: "FlagpolePublish",
            dependencies: [
                "FlagpoleCore",
                "FlagpoleStore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Webhooks leaving Flagpole: the addresses they may reach, and signed deliveries over
        // HTTP/1.1 and TLS.
        .target(
            name: "FlagpoleWebhooks",
            dependencies: [
                "FlagpoleCore",
                "FlagpoleStore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .target(
            name: "FlagpoleServer",
            dependencies: [
                "FlagpoleCore",
                "FlagpoleStore",
                "FlagpolePublish",
                "FlagpoleWebhooks",
                // The docs, which the dashboard serves at /docs/NAME.md.
                "FlagpoleHandbook",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CompressNIO", package: "compress-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                // Its URI parser, which the delivery fast path shares with the router.
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "MultipartKit", package: "multipart-kit"),
            ],
            // The dashboard's templates and assets, compiled in like the migrations.
            resources: [
                .embedInCode("Dashboard/Templates/account.mustache"),
                .embedInCode("Dashboard/Templates/bar.mustache"),
                .embedInCode("Dashboard/Templates/config.mustache"),
                .embedInCode("Dashboard/Templates/configs.mustache"),
                .embedInCode("Dashboard/Templates/dashboard.css"),
                .embedInCode("Dashboard/Templates/dashboard.js"),
                .embedInCode("Dashboard/Templates/diagnostics.mustache"),
                .embedInCode("Dashboard/Templates/error.mustache"),
                .embedInCode("Dashboard/Templates/events.mustache"),
                .embedInCode("Dashboard/Templates/export.mustache"),
                .embedInCode("Dashboard/Templates/feature.mustache"),
                .embedInCode("Dashboard/Templates/home.mustache"),
                .embedInCode("Dashboard/Templates/import.mustache"),
                .embedInCode("Dashboard/Templates/layout.mustache"),
                .embedInCode("Dashboard/Templates/members.mustache"),
                .embedInCode("Dashboard/Templates/overview.mustache"),
                .embedInCode("Dashboard/Templates/reason.mustache"),
                .embedInCode("Dashboard/Templates/revisions.mustache"),
                .embedInCode("Dashboard/Templates/webhooks.mustache"),
                .embedInCode("Dashboard/Templates/segment.mustache"),
                .embedInCode("Dashboard/Templates/results.mustache"),
                .embedInCode("Dashboard/Templates/ramp.mustache"),
                .embedInCode("Dashboard/Templates/segments.mustache"),
                .embedInCode("Dashboard/Templates/settings.mustache"),
                .embedInCode("Dashboard/Templates/signin.mustache"),
                .embedInCode("Dashboard/Templates/targeting-plan.mustache"),
                .embedInCode("Dashboard/Templates/timeline.mustache"),
                .embedInCode("Dashboard/Templates/user.mustache"),
                .embedInCode("Dashboard/Templates/value.mustache"),
                .embedInCode("Dashboard/Templates/welcome.mustache"),
            ]
        ),
        // The command tree, a library so that tests run commands in process (as swift-format keeps
        // its command line thin over a library); `flagpole` is its front end.
        .target(
            name: "FlagpoleCommands",
            dependencies: [
                "FlagpoleCore",
                "FlagpoleStore",
                "FlagpolePublish",
                "FlagpoleServer",
                "FlagpoleWebhooks",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // `flagpole serve` runs the server's application.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            resources: [
                .embedInCode("Resources/example-features.json"),
                .embedInCode("Resources/example-configs.json"),
            ]
        ),
        .executableTarget(name: "flagpole", dependencies: ["FlagpoleCommands"]),

        // What several test targets share: the seeded generator of the fuzzing, property and crash
        // tests, and the decoding property of the fuzzing (MutationFuzzTests and Scripts/fuzz).
        .target(name: "FlagpoleTestSupport", dependencies: ["FlagpoleCore"], path: "Tests/Support"),
        .testTarget(
            name: "FlagpoleCoreTests",
            dependencies: ["FlagpoleCore", "FlagpoleTestSupport"]
        ),
        .testTarget(
            name: "FlagpoleStoreTests",
            dependencies: [
                "FlagpoleStore", "FlagpoleCore", "FlagpoleTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        .testTarget(
            name: "FlagpoleServerTests",
            dependencies: [
                "FlagpoleServer", "FlagpolePublish", "FlagpoleWebhooks", "FlagpoleStore", "FlagpoleCore",
                "FlagpoleTestSupport", "FlagpoleHandbook",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "CompressNIO", package: "compress-nio"),
            ]
        ),
        .testTarget(
            name: "FlagpolePublishTests",
            dependencies: [
                "FlagpolePublish", "FlagpoleStore", "FlagpoleCore",
                .product(name: "Crypto", package: "swift-crypto"),
                // The requests S3Client and the purge hook send, answered in the process (HTTPTransport).
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // The built binary, servers on real ports, database shells and the in-process command
        // runner, shared by the command, end-to-end and soak tests.
        .target(
            name: "EndToEndSupport",
            dependencies: ["FlagpoleCommands", "FlagpoleCore", "FlagpoleTestSupport"],
            path: "Tests/EndToEndSupport"
        ),
        // The command tree in process: many commands at once, each with its own invocation.
        .testTarget(
            name: "FlagpoleCommandsTests",
            dependencies: [
                "FlagpoleCommands", "FlagpoleCore", "FlagpoleMigrations", "FlagpoleStore", "FlagpoleTestSupport",
                "EndToEndSupport",
            ]
        ),
        // The real binary where a process is the point: servers, exit codes, pipes, signals,
        // restarts. It depends on `flagpole` so that SwiftPM builds the binary before them.
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "FlagpoleCore", "FlagpoleMigrations", "FlagpoleTestSupport", "EndToEndSupport", "flagpole",
            ]
        ),
        // The lane that fills the machine on purpose (crash cycles, concurrent writers, two servers
        // on one database, sign-in load): CI runs it after the gate (CONTRIBUTING.md, "Lanes").
        .testTarget(
            name: "SoakTests",
            dependencies: [
                "FlagpoleCore", "FlagpoleMigrations", "FlagpoleTestSupport", "EndToEndSupport", "flagpole",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
