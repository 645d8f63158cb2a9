import Crypto
import FlagpoleCore
import FlagpoleStore
import Foundation
import Testing

@testable import FlagpolePublish

@Suite("Where to publish: targets, endpoints, credentials")
struct PublishSettingsTests {
    let home: URL

    init() throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("flagpole-aws-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: home.appendingPathComponent(".aws"), withIntermediateDirectories: true)
    }

    func write(_ text: String, to name: String) throws {
        try Data(text.utf8).write(to: home.appendingPathComponent(".aws/\(name)"))
    }

    @Test("s3:// URLs: bucket rules, prefixes without stray slashes")
    func targets() throws {
        let target = try S3Target(parsing: "s3://flags-cdn//mobile/v1/")
        #expect(target.bucket == "flags-cdn" && target.prefix == "mobile/v1")
        #expect(target.description == "s3://flags-cdn/mobile/v1")
        #expect(target.key("manifest.json") == "mobile/v1/manifest.json")
        #expect(try S3Target(parsing: "s3://flags").key("a/b") == "a/b")
        for bad in ["flags", "https://flags/x", "s3://", "s3://Flags", "s3://ab", "s3://-flags", "s3://fl_ags"] {
            #expect(throws: PublishError.self, "\(bad)") { try S3Target(parsing: bad) }
        }
    }

    @Test("Path-style for custom endpoints, virtual-hosted for AWS unless the bucket has a dot")
    func endpoints() throws {
        let local = try S3Endpoint(
            endpoint: "http://127.0.0.1:9000", region: "us-east-1", bucket: "b1x", addressing: .auto)
        #expect(local.hostHeader(bucket: "b1x") == "127.0.0.1:9000")
        #expect(local.path(bucket: "b1x", key: "a b/ü") == "/b1x/a%20b/%C3%BC")
        let aws = try S3Endpoint(endpoint: nil, region: "eu-west-1", bucket: "b1x", addressing: .auto)
        #expect(aws.hostHeader(bucket: "b1x") == "b1x.s3.eu-west-1.amazonaws.com")
        #expect(aws.path(bucket: "b1x", key: "k") == "/k")
        let dotted = try S3Endpoint(endpoint: nil, region: "eu-west-1", bucket: "cdn.example.com", addressing: .auto)
        #expect(dotted.hostHeader(bucket: "cdn.example.com") == "s3.eu-west-1.amazonaws.com")
        let explicitPort = try S3Endpoint(
            endpoint: "https://minio.internal:443", region: "x", bucket: "b1x", addressing: .virtual)
        #expect(explicitPort.hostHeader(bucket: "b1x") == "b1x.minio.internal")
        for bad in ["minio.internal", "ftp://x", "http://x/path", "http://"] {
            #expect(throws: PublishError.self, "\(bad)") {
                try S3Endpoint(endpoint: bad, region: "x", bucket: "b1x", addressing: .auto)
            }
        }
    }

    @Test("Credentials: the environment, else the profile's, in the credentials then the config file")
    func credentialChain() throws {
        try write(
            """
            [default]
            aws_access_key_id = AKIADEFAULT
            aws_secret_access_key = default-secret
            [ci]
            aws_access_key_id=AKIACI
            aws_secret_access_key=ci-secret
            aws_session_token = ci-token
            """, to: "credentials")
        try write(
            """
            [default]
            region = eu-central-1
            [profile staging]
            region = ap-south-1
            endpoint_url = http://minio:9000
            aws_access_key_id = AKIASTAGING
            aws_secret_access_key = staging-secret
            s3 =
              addressing_style = path
            [sso-session corp]
            region = us-west-2
            """, to: "config")
        let base = ["HOME": home.path]

        let fromEnvironment = try AWSConfiguration.resolve(
            environment: base.merging(
                ["AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": "env-secret", "AWS_REGION": "us-west-1"]
            ) { $1 })
        #expect(fromEnvironment.credentials.accessKeyID == "AKIAENV")
        #expect(fromEnvironment.region == "us-west-1")

        let byDefault = try AWSConfiguration.resolve(environment: base)
        #expect(byDefault.credentials.accessKeyID == "AKIADEFAULT" && byDefault.region == "eu-central-1")
        #expect(byDefault.endpoint == nil)

        // --profile wins over the environment's keys, as with the AWS command line.
        let explicit = try AWSConfiguration.resolve(
            profile: "ci",
            environment: base.merging(["AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": "x"]) { $1 })
        #expect(explicit.credentials.accessKeyID == "AKIACI" && explicit.credentials.sessionToken == "ci-token")

        let staging = try AWSConfiguration.resolve(environment: base.merging(["AWS_PROFILE": "staging"]) { $1 })
        #expect(staging.credentials.accessKeyID == "AKIASTAGING")
        #expect(staging.region == "ap-south-1" && staging.endpoint == "http://minio:9000")
        let overridden = try AWSConfiguration.resolve(
            region: "sa-east-1", endpoint: "http://other:1",
            environment: base.merging(["AWS_PROFILE": "staging", "AWS_ENDPOINT_URL": "http://env:2"]) { $1 })
        #expect(overridden.region == "sa-east-1" && overridden.endpoint == "http://other:1")
        let fromEnvironmentURL = try AWSConfiguration.resolve(
            environment: base.merging(["AWS_ENDPOINT_URL": "http://env:2", "AWS_ENDPOINT_URL_S3": "http://s3:3"]) { $1 }
        )
        #expect(fromEnvironmentURL.endpoint == "http://s3:3")

        // Other files, by the environment.
        let other = home.appendingPathComponent("other-credentials")
        try Data("[default]\naws_access_key_id = AKIAOTHER\naws_secret_access_key = s\n".utf8).write(to: other)
        let moved = try AWSConfiguration.resolve(
            environment: ["HOME": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": other.path])
        #expect(moved.credentials.accessKeyID == "AKIAOTHER" && moved.region == "us-east-1")
    }

    @Test("Missing credentials say where they were looked for, and printing them never shows a secret")
    func missingAndHidden() throws {
        #expect {
            try AWSConfiguration.resolve(environment: ["HOME": home.path])
        } throws: { error in
            "\(error)".contains("AWS_ACCESS_KEY_ID") && "\(error)".contains(".aws/credentials")
        }
        #expect {
            try AWSConfiguration.resolve(profile: "nope", environment: ["HOME": home.path])
        } throws: { error in "\(error)".contains("The profile nope") }

        let credentials = AWSCredentials(
            accessKeyID: "AKIAVISIBLE", secretAccessKey: "very-secret", sessionToken: "token-secret", source: "test")
        for text in [
            "\(credentials)", String(reflecting: credentials),
            {
                var s = ""
                dump(credentials, to: &s)
                return s
            }(),
        ] {
            #expect(!text.contains("very-secret") && !text.contains("token-secret"), "\(text)")
        }
    }
}

@Suite("What is published: objects, manifest, purge hook")
struct PublishedObjectTests {
    let revision = PublishedRevision(
        path: EnvironmentPath(tenant: TenantSlug(rawValue: "acme"), environment: EnvironmentName(rawValue: "beta")),
        number: 7, createdAt: Date(), features: Array("{\"features\": []}\n".utf8), configs: Array("{}\n".utf8),
        settings: DeliverySettings(isPrivate: true))

    @Test("Six objects, the immutable copies first; a private environment's are never public")
    func layout() throws {
        let objects = try PublishedObject.objects(of: revision, defaultCacheControl: CacheControl.standard)
        #expect(
            objects.map(\.key) == [
                "acme/beta/revisions/7/features.json", "acme/beta/revisions/7/features.json.gz",
                "acme/beta/revisions/7/configs.json", "acme/beta/features.json", "acme/beta/features.json.gz",
                "acme/beta/configs.json",
            ])
        #expect(objects.prefix(3).allSatisfy(\.isImmutable) && !objects.suffix(3).contains(where: \.isImmutable))
        #expect(objects.allSatisfy { $0.cacheControl.hasPrefix("private") })
        #expect(objects.filter { $0.contentEncoding == "gzip" }.map(\.key).allSatisfy { $0.hasSuffix(".gz") })
        #expect(objects[0].sha256 == Hex.encode(SHA256.hash(data: revision.features)))
    }

    @Test("The manifest reads back what it writes, and refuses a file Flagpole did not write")
    func manifest() throws {
        let objects = try PublishedObject.objects(of: revision, defaultCacheControl: CacheControl.standard)
        let manifest = Manifest(objects.map(\.entry))
        #expect(try Manifest(parsing: manifest.bytes) == manifest)
        #expect(manifest.bytes == Manifest(objects.reversed().map(\.entry)).bytes, "the order of entries is the path's")
        for foreign in ["[]", "{\"files\": [{\"path\": 1}]}", "<xml/>"] {
            #expect(throws: PublishError.self) { try Manifest(parsing: Array(foreign.utf8)) }
        }
    }

    @Test("The purge hook's body names the environment and URLs; its signature is HMAC-SHA256 of the bytes")
    func purgeHook() throws {
        let hook = PurgeHook(url: "http://relay", secret: Array("0123456789abcdef".utf8), publicBaseURL: "https://cdn/")
        #expect(hook.publicBaseURL == "https://cdn")
        let body = PurgeHook.body(
            for: revision.path, revision: 7, urls: ["https://cdn/acme/beta/features.json"],
            target: try S3Target(parsing: "s3://flags/x"), at: Date(timeIntervalSince1970: 1_795_000_000))
        guard case .object(let parsed) = try JSONParser.parse(body).value else {
            Issue.record("the body is not a JSON object")
            return
        }
        #expect(parsed["tenant"] == .string("acme") && parsed["revision"] == .number(7))
        #expect(parsed["urls"] == .array([.string("https://cdn/acme/beta/features.json")]))
        #expect(parsed["publishedAt"] == .string("2026-11-18T11:06:40Z"))
        let expected = HMAC<SHA256>.authenticationCode(for: body, using: SymmetricKey(data: hook.secret))
        #expect(hook.signature(of: body) == "sha256=" + Hex.encode(expected))
    }
}
