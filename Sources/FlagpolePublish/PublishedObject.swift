import FlagpoleCore
import FlagpoleStore

/// One file of an environment as a CDN serves it, from a bucket or an upload tree.
///
/// Per environment, under `{tenant}/{env}/`: `features.json`, its gzip twin `features.json.gz`
/// and `configs.json`, which change with every revision, and the same three under
/// `revisions/{N}/`, which never change once written.
public struct PublishedObject: Sendable, Hashable {
    /// The path under the bucket's prefix or the tree's directory.
    public var key: String
    public var environment: EnvironmentPath
    public var revision: Int
    public var bytes: [UInt8]
    /// Hex SHA-256 of `bytes`.
    public var sha256: String
    public var cacheControl: String
    /// `gzip` for the gzip twin, which CDNs that don't compress serve as is.
    public var contentEncoding: String?
    /// A revision's copy: written once, never replaced.
    public var isImmutable: Bool
    /// Of a private environment: never given a public ACL.
    public var isPrivate: Bool

    public static let contentType = "application/json; charset=utf-8"

    /// The six objects of `revision`: its immutable copies first, then the current documents.
    public static func objects(of revision: PublishedRevision, defaultCacheControl: String) throws -> [PublishedObject]
    {
        let features = DeliveryArtifact(bytes: revision.features)
        let gzip = DeliveryArtifact(bytes: try features.gzipped())
        let configs = DeliveryArtifact(bytes: revision.configs)
        let folder = "\(revision.path.tenant)/\(revision.path.environment)"
        var objects: [PublishedObject] = []
        for (base, cacheControl, isImmutable) in [
            ("\(folder)/revisions/\(revision.number)", CacheControl.revision(revision.settings), true),
            (folder, CacheControl.current(revision.settings, default: defaultCacheControl), false),
        ] {
            for (name, artifact, encoding) in [
                ("features.json", features, nil), ("features.json.gz", gzip, "gzip"), ("configs.json", configs, nil),
            ] {
                objects.append(
                    PublishedObject(
                        key: "\(base)/\(name)", environment: revision.path, revision: revision.number,
                        bytes: artifact.bytes, sha256: artifact.sha256, cacheControl: cacheControl,
                        contentEncoding: encoding, isImmutable: isImmutable,
                        isPrivate: revision.settings.isPrivate))
            }
        }
        return objects
    }

    /// The object as its manifest lists it.
    public var entry: Manifest.Entry {
        Manifest.Entry(
            path: key, environment: environment, revision: revision, sha256: sha256, size: bytes.count,
            cacheControl: cacheControl)
    }
}

/// `manifest.json`: every published file with its SHA-256, size and revision, sorted by path and
/// without a timestamp, so that an unchanged set of files has an unchanged manifest.
///
/// `{"files": [{"path", "tenant", "environment", "revision", "sha256", "size", "cacheControl"}]}`
public struct Manifest: Sendable, Equatable {
    public struct Entry: Sendable, Hashable {
        public var path: String
        public var environment: EnvironmentPath
        public var revision: Int
        public var sha256: String
        public var size: Int
        public var cacheControl: String
    }

    public static let name = "manifest.json"

    /// By path.
    public var entries: [String: Entry] = [:]

    public init(_ entries: [Entry] = []) {
        for entry in entries { self.entries[entry.path] = entry }
    }

    public var bytes: [UInt8] {
        let files = entries.values.sorted { $0.path < $1.path }.map { entry -> JSONValue in
            [
                "path": .string(entry.path),
                "tenant": .string(entry.environment.tenant.rawValue),
                "environment": .string(entry.environment.environment.rawValue),
                "revision": .number(Double(entry.revision)),
                "sha256": .string(entry.sha256),
                "size": .number(Double(entry.size)),
                "cacheControl": .string(entry.cacheControl),
            ]
        }
        return JSONWriter().bytes(of: ["files": .array(files)])
    }

    /// Reads a manifest Flagpole wrote; `nil` with what is wrong for anything else.
    public init(parsing bytes: [UInt8]) throws(PublishError) {
        func refuse(_ why: String) -> PublishError { .foreignManifest(why) }
        let root: JSONValue
        do { root = try JSONParser.parse(bytes).value } catch { throw refuse("it is not JSON (\(error.message))") }
        guard case .object(let object) = root, case .array(let files)? = object["files"] else {
            throw refuse("it has no \"files\" array")
        }
        for (index, file) in files.enumerated() {
            guard case .object(let file) = file, case .string(let path)? = file["path"],
                case .string(let tenant)? = file["tenant"], case .string(let environment)? = file["environment"],
                case .number(let revision)? = file["revision"], case .string(let sha256)? = file["sha256"],
                case .number(let size)? = file["size"]
            else { throw refuse("its file \(index) lacks path, tenant, environment, revision, sha256 or size") }
            var cacheControl = ""
            if case .string(let value)? = file["cacheControl"] { cacheControl = value }
            entries[path] = Entry(
                path: path,
                environment: EnvironmentPath(
                    tenant: TenantSlug(rawValue: tenant), environment: EnvironmentName(rawValue: environment)),
                revision: Int(revision), sha256: sha256, size: Int(size), cacheControl: cacheControl)
        }
    }
}
