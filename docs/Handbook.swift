/// This folder's Markdown, compiled into the binary (as the migrations are) so that a running
/// server serves the documents of its own version: the dashboard links its pages here
/// (`/docs/RAMPS.md`) instead of naming a file the reader would have to find.
///
/// To add a document, list it here and in Package.swift's resources; `HandbookTests` checks that
/// every Markdown file of the folder is listed.
public enum Handbook {
    /// Every document by file name, its bytes as written.
    public static let pages: [String: [UInt8]] = [
        "ARCHITECTURE.md": PackageResources.ARCHITECTURE_md,
        "BUCKETEER.md": PackageResources.BUCKETEER_md,
        "CHOICES.md": PackageResources.CHOICES_md,
        "CLI.md": PackageResources.CLI_md,
        "CONFIGS.md": PackageResources.CONFIGS_md,
        "DASHBOARD.md": PackageResources.DASHBOARD_md,
        "DEPENDENCIES.md": PackageResources.DEPENDENCIES_md,
        "DESIGN.md": PackageResources.DESIGN_md,
        "DIAGNOSTICS.md": PackageResources.DIAGNOSTICS_md,
        "FORMAT.md": PackageResources.FORMAT_md,
        "MEMBERS.md": PackageResources.MEMBERS_md,
        "OFREP.md": PackageResources.OFREP_md,
        "OVERVIEW.md": PackageResources.OVERVIEW_md,
        "PERFORMANCE.md": PackageResources.PERFORMANCE_md,
        "POSTGRES.md": PackageResources.POSTGRES_md,
        "PUBLISHING.md": PackageResources.PUBLISHING_md,
        "RAMPS.md": PackageResources.RAMPS_md,
        "RELIABILITY.md": PackageResources.RELIABILITY_md,
        "RESULTS.md": PackageResources.RESULTS_md,
        "SERVER.md": PackageResources.SERVER_md,
        "TARGETING.md": PackageResources.TARGETING_md,
        "WEBHOOKS.md": PackageResources.WEBHOOKS_md,
    ]
}
