import ArgumentParser
import FlagpolePublish
import FlagpoleStore
import Foundation

/// How to reach a bucket and what to tell a CDN: shared by `publish` and `serve --publish-to`.
struct PublishOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The S3-compatible server, as http(s)://HOST[:PORT] (default: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's endpoint_url, else AWS).",
            valueName: "url"))
    var endpoint: String?

    @Option(
        help: ArgumentHelp("The bucket's region (default: AWS_REGION, the profile's, us-east-1).", valueName: "region"))
    var region: String?

    @Option(help: ArgumentHelp("The profile of ~/.aws/credentials and ~/.aws/config to use.", valueName: "name"))
    var profile: String?

    @Option(
        help: ArgumentHelp(
            "path (https://HOST/BUCKET/KEY), virtual (https://BUCKET.HOST/KEY) or auto: path for a custom endpoint, virtual for AWS.",
            valueName: "style"))
    var addressing: String = S3Addressing.auto.rawValue

    @Flag(help: "Give the objects of public environments the public-read ACL (never those of private ones).")
    var publicRead = false

    @Option(help: ArgumentHelp("Requests in flight at once.", valueName: "n"))
    var concurrency = 16

    @Option(
        help: ArgumentHelp(
            "Times a request is sent again after no answer, a timeout, a 5xx, a 429 or a 403.", valueName: "n"))
    var retries = RetryPolicy.standard.attempts - 1

    @Option(help: ArgumentHelp("Seconds one request may take.", valueName: "seconds"))
    var timeout = 30

    @Option(
        help: ArgumentHelp(
            "After each successful publish, POST the changed URLs of each environment here, signed (see docs/PUBLISHING.md).",
            valueName: "url"))
    var purgeURL: String?

    @Option(
        help: ArgumentHelp(
            "A file holding the purge hook's shared secret (default: the FLAGPOLE_PURGE_SECRET environment variable).",
            valueName: "file"))
    var purgeSecretFile: String?

    @Option(
        help: ArgumentHelp(
            "Where the CDN serves the bucket (https://cdn.example.com): the purge hook's URLs are this and the object's key.",
            valueName: "url"))
    var purgeBaseURL: String?

    func validate() throws {
        guard S3Addressing(rawValue: addressing) != nil else {
            throw ValidationError("--addressing is path, virtual or auto, not \(addressing).")
        }
        guard concurrency >= 1, retries >= 0, timeout >= 1 else {
            throw ValidationError("--concurrency and --timeout must be 1 or more, --retries 0 or more.")
        }
        if purgeURL == nil, purgeSecretFile != nil || purgeBaseURL != nil {
            throw ValidationError("--purge-secret-file and --purge-base-url go with --purge-url.")
        }
        if let purgeURL, !(purgeURL.hasPrefix("http://") || purgeURL.hasPrefix("https://")) {
            throw ValidationError("--purge-url must be an http:// or https:// URL, not \(purgeURL).")
        }
    }

    /// `tenant/env` arguments of `option`, validated.
    static func environments(_ texts: [String], option: String) throws -> [EnvironmentPath] {
        try texts.map { text in
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2 else {
                throw ValidationError("\(option) takes tenant/env, such as acme/staging, not \(text).")
            }
            return try EnvironmentOptions.path(tenant: String(parts[0]), environment: String(parts[1]))
        }
    }

    /// The settings of a publish to `target`.
    func settings(to target: S3Target) throws -> PublishSettings {
        var settings = PublishSettings(target: target)
        settings.endpoint = endpoint
        settings.region = region
        settings.profile = profile
        settings.addressing = S3Addressing(rawValue: addressing)!
        settings.publicRead = publicRead
        settings.concurrency = concurrency
        settings.retries.attempts = retries + 1
        settings.retries.timeout = .seconds(timeout)
        if let purgeURL {
            settings.purge = PurgeHook(url: purgeURL, secret: try purgeSecret(), publicBaseURL: purgeBaseURL)
        }
        return settings
    }

    private func purgeSecret() throws -> [UInt8] {
        let secret: String
        if let purgeSecretFile {
            guard let data = FileManager.default.contents(atPath: Invocation.current.resolve(purgeSecretFile)) else {
                throw CommandFailure(
                    "Cannot read the purge secret from \(purgeSecretFile): check that it exists and is readable.")
            }
            secret = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        } else {
            secret = Invocation.current.environment["FLAGPOLE_PURGE_SECRET"] ?? ""
        }
        guard secret.utf8.count >= 16 else {
            throw CommandFailure(
                "The purge hook needs a shared secret of at least 16 characters: set FLAGPOLE_PURGE_SECRET or --purge-secret-file (`openssl rand -hex 32` makes one)."
            )
        }
        return Array(secret.utf8)
    }
}
