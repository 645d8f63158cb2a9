import FlagpoleCore
import FlagpoleStore
import Foundation

/// The directory a sync tool uploads to a CDN bucket: each environment's objects as a bucket
/// holds them (see `PublishedObject`) and a `manifest.json`.
///
/// A new tree is written beside the old one and swapped in with one atomic rename, so a
/// sync tool never sees half of it. Files whose bytes did not change keep their bytes and
/// their modification time, so size-and-time sync tools skip them.
public struct CDNTree: Sendable {
    public let directory: URL
    /// `Cache-Control` of environments that set none, as the manifest lists it.
    public let defaultCacheControl: String

    public init(directory: URL, defaultCacheControl: String = CacheControl.standard) {
        self.directory = directory
        self.defaultCacheControl = defaultCacheControl
    }

    /// Writes every revision's objects, then the manifest, and swaps the tree in.
    ///
    /// - throws: `PublishError.cannotWrite`, `PublishError.notADirectory`; the old tree is then untouched.
    @discardableResult
    public func publish(_ revisions: [PublishedRevision]) throws -> [Manifest.Entry] {
        let fileManager = FileManager.default
        var isDirectory: ObjCBool = false
        let exists = fileManager.fileExists(atPath: directory.path, isDirectory: &isDirectory)
        if exists && !isDirectory.boolValue { throw PublishError.notADirectory(path: directory.path) }

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
            if let error = error as? PublishError { throw error }
            throw PublishError.cannotWrite(path: directory.path, reason: (error as NSError).localizedDescription)
        }
    }

    private func write(_ revisions: [PublishedRevision], into staging: URL) throws -> [Manifest.Entry] {
        var manifest = Manifest()
        for revision in revisions {
            for object in try PublishedObject.objects(of: revision, defaultCacheControl: defaultCacheControl) {
                try place(object.bytes, at: object.key, in: staging)
                manifest.entries[object.key] = object.entry
            }
        }
        try place(manifest.bytes, at: Manifest.name, in: staging)
        return manifest.entries.values.sorted { $0.path < $1.path }
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
}
