/// The schema migrations, oldest first.
///
/// Each is a numbered SQL file of this folder, embedded in the binary by Package.swift so the
/// schema never depends on the working directory. To change the schema, add the next
/// numbered file, list it in Package.swift's resources and here; never edit a shipped one.
public enum SchemaMigrations {
    /// One migration: its identifier (the file name without `.sql`) and its SQL.
    public struct Migration: Sendable {
        public let identifier: String
        public let sql: String
    }

    public static let all: [Migration] = [
        Migration(identifier: "0001_initial", sql: String(decoding: PackageResources._001_initial_sql, as: UTF8.self)),
        Migration(
            identifier: "0002_assignments", sql: String(decoding: PackageResources._002_assignments_sql, as: UTF8.self)),
        Migration(identifier: "0003_server", sql: String(decoding: PackageResources._003_server_sql, as: UTF8.self)),
        Migration(
            identifier: "0004_sessions", sql: String(decoding: PackageResources._004_sessions_sql, as: UTF8.self)),
        Migration(
            identifier: "0005_identity_and_history",
            sql: String(decoding: PackageResources._005_identity_and_history_sql, as: UTF8.self)),
        Migration(
            identifier: "0006_deltas_kept_by_the_store",
            sql: String(decoding: PackageResources._006_deltas_kept_by_the_store_sql, as: UTF8.self)),
        Migration(identifier: "0007_configs", sql: String(decoding: PackageResources._007_configs_sql, as: UTF8.self)),
        Migration(
            identifier: "0008_publish_log", sql: String(decoding: PackageResources._008_publish_log_sql, as: UTF8.self)),
        Migration(
            identifier: "0009_targeting", sql: String(decoding: PackageResources._009_targeting_sql, as: UTF8.self)),
        Migration(
            identifier: "0010_user_attributes",
            sql: String(decoding: PackageResources._010_user_attributes_sql, as: UTF8.self)),
        Migration(
            identifier: "0011_experiment_results",
            sql: String(decoding: PackageResources._011_experiment_results_sql, as: UTF8.self)),
    ]

    /// PostgreSQL's migrations, `PostgreSQL/NNNN_name.postgres.sql`: the same versions as
    /// SQLite's, each reaching the same tables, columns, constraints and indexes in PostgreSQL's
    /// own types (the schema test compares the two catalogs).
    public static let postgres: [Migration] = [
        Migration(
            identifier: "0001_initial", sql: String(decoding: PackageResources._001_initial_postgres_sql, as: UTF8.self)
        ),
        Migration(
            identifier: "0002_assignments",
            sql: String(decoding: PackageResources._002_assignments_postgres_sql, as: UTF8.self)),
        Migration(
            identifier: "0003_server", sql: String(decoding: PackageResources._003_server_postgres_sql, as: UTF8.self)),
        Migration(
            identifier: "0004_sessions",
            sql: String(decoding: PackageResources._004_sessions_postgres_sql, as: UTF8.self)),
        Migration(
            identifier: "0005_identity_and_history",
            sql: String(decoding: PackageResources._005_identity_and_history_postgres_sql, as: UTF8.self)),
        Migration(
            identifier: "0006_deltas_kept_by_the_store",
            sql: String(decoding: PackageResources._006_deltas_kept_by_the_store_postgres_sql, as: UTF8.self)),
        Migration(
            identifier: "0007_configs", sql: String(decoding: PackageResources._007_configs_postgres_sql, as: UTF8.self)
        ),
        Migration(
            identifier: "0008_publish_log",
            sql: String(decoding: PackageResources._008_publish_log_postgres_sql, as: UTF8.self)),
        Migration(
            identifier: "0009_targeting",
            sql: String(decoding: PackageResources._009_targeting_postgres_sql, as: UTF8.self)),
        Migration(
            identifier: "0010_user_attributes",
            sql: String(decoding: PackageResources._010_user_attributes_postgres_sql, as: UTF8.self)),
        Migration(
            identifier: "0011_experiment_results",
            sql: String(decoding: PackageResources._011_experiment_results_postgres_sql, as: UTF8.self)),
    ]
}
