/// The schema migrations, oldest first.
///
/// Each is a numbered SQL file of this folder, embedded in the binary by Package.swift so the
/// schema never depends on the working directory. To change the schema, add the next numbered
/// file and its PostgreSQL twin (`PostgreSQL/NNNN_name.postgres.sql`), list both in Package.swift's
/// resources and here; never edit a shipped one.
public enum SchemaMigrations {
    /// One migration: its identifier (the file name without `.sql`) and its SQL.
    public struct Migration: Sendable {
        public let identifier: String
        public let sql: String

        init(_ identifier: String, _ file: [UInt8]) {
            self.identifier = identifier
            self.sql = String(decoding: file, as: UTF8.self)
        }
    }

    public static let all: [Migration] = [
        Migration("0001_initial", PackageResources._001_initial_sql),
        Migration("0002_assignments", PackageResources._002_assignments_sql),
        Migration("0003_server", PackageResources._003_server_sql),
        Migration("0004_sessions", PackageResources._004_sessions_sql),
        Migration("0005_identity_and_history", PackageResources._005_identity_and_history_sql),
        Migration("0006_deltas_kept_by_the_store", PackageResources._006_deltas_kept_by_the_store_sql),
        Migration("0007_configs", PackageResources._007_configs_sql),
        Migration("0008_publish_log", PackageResources._008_publish_log_sql),
        Migration("0009_targeting", PackageResources._009_targeting_sql),
        Migration("0010_user_attributes", PackageResources._010_user_attributes_sql),
        Migration("0011_experiment_results", PackageResources._011_experiment_results_sql),
        Migration("0012_environment_marking", PackageResources._012_environment_marking_sql),
        Migration("0013_members", PackageResources._013_members_sql),
        Migration("0014_ramps", PackageResources._014_ramps_sql),
        Migration("0015_ramp_guards", PackageResources._015_ramp_guards_sql),
        Migration("0016_fetches_and_webhooks", PackageResources._016_fetches_and_webhooks_sql),
        Migration("0017_refused_event_batches", PackageResources._017_refused_event_batches_sql),
        Migration(
            "0018_test_controls_and_session_browsers", PackageResources._018_test_controls_and_session_browsers_sql),
        Migration(
            "0019_webhook_events_and_change_sequence", PackageResources._019_webhook_events_and_change_sequence_sql),
    ]

    /// PostgreSQL's migrations, `PostgreSQL/NNNN_name.postgres.sql`: the same versions as
    /// SQLite's, each reaching the same tables, columns, constraints and indexes in PostgreSQL's
    /// own types (the schema test compares the two catalogs).
    public static let postgres: [Migration] = [
        Migration("0001_initial", PackageResources._001_initial_postgres_sql),
        Migration("0002_assignments", PackageResources._002_assignments_postgres_sql),
        Migration("0003_server", PackageResources._003_server_postgres_sql),
        Migration("0004_sessions", PackageResources._004_sessions_postgres_sql),
        Migration("0005_identity_and_history", PackageResources._005_identity_and_history_postgres_sql),
        Migration("0006_deltas_kept_by_the_store", PackageResources._006_deltas_kept_by_the_store_postgres_sql),
        Migration("0007_configs", PackageResources._007_configs_postgres_sql),
        Migration("0008_publish_log", PackageResources._008_publish_log_postgres_sql),
        Migration("0009_targeting", PackageResources._009_targeting_postgres_sql),
        Migration("0010_user_attributes", PackageResources._010_user_attributes_postgres_sql),
        Migration("0011_experiment_results", PackageResources._011_experiment_results_postgres_sql),
        Migration("0012_environment_marking", PackageResources._012_environment_marking_postgres_sql),
        Migration("0013_members", PackageResources._013_members_postgres_sql),
        Migration("0014_ramps", PackageResources._014_ramps_postgres_sql),
        Migration("0015_ramp_guards", PackageResources._015_ramp_guards_postgres_sql),
        Migration("0016_fetches_and_webhooks", PackageResources._016_fetches_and_webhooks_postgres_sql),
        Migration("0017_refused_event_batches", PackageResources._017_refused_event_batches_postgres_sql),
        Migration(
            "0018_test_controls_and_session_browsers",
            PackageResources._018_test_controls_and_session_browsers_postgres_sql),
        Migration(
            "0019_webhook_events_and_change_sequence",
            PackageResources._019_webhook_events_and_change_sequence_postgres_sql),
    ]
}
