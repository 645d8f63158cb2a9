import ArgumentParser
import FlagpoleCore
import FlagpoleStore

/// `flagpole demo`: the main job end to end on example data.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Import an example features.json into a demo tenant and show the report, the features and the export.",
        discussion: "Safe to run again: the second import finds nothing new and creates no revision.")

    @Option(help: ArgumentHelp("The tenant to create or reuse.", valueName: "slug"))
    var tenant: String = "demo"

    @OptionGroup var database: DatabaseOptions

    func validate() throws {
        _ = try TenantOptions.slug(tenant)
    }

    func run() async throws {
        let path = try EnvironmentOptions.path(tenant: tenant, environment: EnvironmentName.production.rawValue)
        let file = "example-features.json"
        let bytes = PackageResources.example_features_json
        let store = try database.openStore()

        section("1. Validate \(file) as the app reads it")
        let decoded = DocumentDecoder.decode(bytes)
        let report = DiagnosticReport(file: file, diagnostics: decoded.diagnostics)
        for line in report.lines { Console.out(line) }
        Console.out("\(file): \(decoded.isValid ? "valid" : "invalid"), \(report.summary)")

        section("2. Import it into \(path) in \(database.path)")
        if try await !store.tenants().contains(where: { $0.slug == path.tenant }) {
            try await store.createTenant(path.tenant, name: "Demo App")
            Console.out("Created tenant \(path.tenant) with environment production.")
        }
        let outcome = try await store.importDocument(bytes, into: path, options: ImportOptions(message: "demo import", actor: Actor.current))
        Console.out(ImportSummary(outcome: outcome, file: file).text)

        section("3. The features, with the biases the app actually uses")
        Console.out(FeatureListing(document: try await store.snapshot(of: path).document).text)

        section("4. The export, ready for CDN upload")
        Console.out(bytes: try await store.revision(of: path).document)

        section("Next")
        Console.out("""
            flagpole feature list --tenant \(path.tenant)
            flagpole revisions --tenant \(path.tenant)
            flagpole export --all --dir ./cdn
            flagpole validate your-features.json
            """)
    }

    private func section(_ title: String) {
        Console.out("\n== \(title)\n")
    }
}
