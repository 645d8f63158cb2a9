import FlagpoleCore
import FlagpoleStore
import Foundation

/// The directory a sync tool uploads to a CDN bucket:
/// `{tenant}/{env}/features.json`, `features.json.gz` and a `manifest.json`.
///
/// A new tree is written beside the old one and swapped in with one atomic rename, so a
/// sync tool never sees half of it. Files whose bytes did not change keep their bytes and
/// their modification time, so size-and-time sync tools skip them.
public struct CDNTree: Sendable {
    /// One file of the tree, as listed in the manifest.
    public struct Entry: Hashable, Sendable {
        public var path: String
        public var revision: Int
        public var sha256: String
        public var size: Int
    }

    public let directory: URL

    public init(directory: URL) {
        self.directory = directory
    }

    /// Writes every revision's document and its gzip, then the manifest, and swaps the tree in.
    ///
    /// - throws: `ServerError.cannotWrite`, `ServerError.notADirectory`; the old tree is then untouched.
    @discardableResult
    public func publish(_ revisions: [Revision]) throws -> [Entry] {
        let fileManager = FileManager.default
        var isDirectory: ObjCBool = false
        let exists = fileManager.fileExists(atPath: directory.path, isDirectory: &isDirectory)
        if exists && !isDirectory.boolValue { throw ServerError.notADirectory(path: directory.path) }

        let staging = directory.deletingLastPathComponent()
            .appendingPathComponent(
                ".\(directory.lastPathComponent).staging-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))"
            )
        do {
            let entries = try write(revisions, into: staging)
            if exists {
                try AtomicRename.exchange(staging, directory)
                try? fileManager.removeItem(at: staging)
            } else {
                try fileManager.moveItem(at: staging, to: directory)
            }
            return entries
        } catch {
            try? fileManager.removeItem(at: staging)
            if let error = error as? ServerError { throw error }
            throw ServerError.cannotWrite(path: directory.path, reason: (error as NSError).localizedDescription)
        }
    }

    private func write(_ revisions: [Revision], into staging: URL) throws -> [Entry] {
        var entries: [Entry] = []
        for revision in revisions {
            let folder = "\(revision.path.tenant)/\(revision.path.environment)"
            let artifact = DeliveryArtifact(bytes: revision.document)
            let gzip = DeliveryArtifact(bytes: try artifact.gzipped())
            for (name, file) in [("features.json", artifact), ("features.json.gz", gzip)] {
                let path = "\(folder)/\(name)"
                try place(file.bytes, at: path, in: staging)
                entries.append(
                    Entry(path: path, revision: revision.number, sha256: file.sha256, size: file.bytes.count))
            }
        }
        entries.sort { $0.path < $1.path }
        try place(Self.manifest(of: entries), at: "manifest.json", in: staging)
        return entries
    }

    /// Writes `bytes` at `path` under `staging`, keeping the old file's time when its bytes are the same.
    private func place(_ bytes: [UInt8], at path: String, in staging: URL) throws {
        let fileManager = FileManager.default
        let target = staging.appendingPathComponent(path)
        try fileManager.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: target)
        let previous = directory.appendingPathComponent(path)
        if let old = fileManager.contents(atPath: previous.path), old.elementsEqual(bytes),
            let modified = try fileManager.attributesOfItem(atPath: previous.path)[.modificationDate]
        {
            try fileManager.setAttributes([.modificationDate: modified], ofItemAtPath: target.path)
        }
    }

    /// `{"files": [{"path", "tenant", "environment", "revision", "sha256", "size"}]}`, without a
    /// timestamp, so an unchanged tree has an unchanged manifest.
    static func manifest(of entries: [Entry]) -> [UInt8] {
        let files = entries.map { entry -> JSONValue in
            let parts = entry.path.split(separator: "/").map(String.init)
            return [
                "path": .string(entry.path),
                "tenant": .string(parts[0]),
                "environment": .string(parts[1]),
                "revision": .number(Double(entry.revision)),
                "sha256": .string(entry.sha256),
                "size": .number(Double(entry.size)),
            ]
        }
        return JSONWriter().bytes(of: ["files": .array(files)])
    }
}
