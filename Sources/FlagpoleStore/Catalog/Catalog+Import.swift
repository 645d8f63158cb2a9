import FlagpoleCore
import Foundation

extension Catalog {
    /// Replaces an environment's document with a file, as one transaction.
    ///
    /// The file is read as the client reads it; any error refuses it and nothing is written.
    /// Features are matched by name: an existing feature keeps its salt, a feature absent from
    /// the file is archived (and gets its salt back if it returns), and a file that renders to
    /// the current revision's bytes creates no revision. Otherwise the import creates exactly
    /// one revision with its audit rows.
    ///
    /// - throws: `DocumentError.importRefused` (errors, or warnings with `isStrict`),
    ///   `TenancyError.tenantNotFound`, `TenancyError.environmentNotFound`.
    public func importDocument(
        _ bytes: [UInt8], into path: EnvironmentPath, options: ImportOptions
    ) async throws -> ImportOutcome {
        // Parsing needs no database: kept out of the write lock.
        try await importDocument(DocumentDecoder.decode(bytes), into: path, options: options)
    }

    /// Replaces an environment's document with a file the caller has decoded (see
    /// `importDocument(_:into:options:)`): the command line decodes it while the store opens.
    ///
    /// - throws: `DocumentError.importRefused` (errors, or warnings with `isStrict`),
    ///   `TenancyError.tenantNotFound`, `TenancyError.environmentNotFound`.
    public func importDocument(
        _ decoded: DecodedDocument, into path: EnvironmentPath, options: ImportOptions
    ) async throws -> ImportOutcome {
        // Rendering goes on beside the transaction, which waits for the bytes only where it needs them.
        guard let document = decoded.document else {
            throw DocumentError.importRefused(path, diagnostics: decoded.diagnostics, isStrict: false)
        }
        let rendering = Rendering(rendering: document)
        if options.isDryRun {
            return try await read { db in
                try DocumentPlan(
                    db, path: path, decoded: decoded, document: document, rendering: rendering, options: options
                ).outcome
            }
        }
        return try await write { db in
            try DocumentPlan(
                db, path: path, decoded: decoded, document: document, rendering: rendering, options: options
            )
            .apply(db, kind: .import).outcome
        }
    }
}
