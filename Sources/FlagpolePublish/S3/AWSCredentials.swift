import Foundation

/// A key pair to sign S3 requests with. Printing it never shows the secret or the token.
public struct AWSCredentials: Sendable, CustomStringConvertible, CustomReflectable {
    public var accessKeyID: String
    public var secretAccessKey: String
    public var sessionToken: String?
    /// Where they were read: `environment`, or `profile NAME in FILE`.
    public var source: String

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, source: String) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.source = source
    }

    public var description: String { "credentials from \(source)" }
    public var customMirror: Mirror { Mirror(self, children: ["source": source]) }
}

/// Where to publish and as whom, read the way the AWS command line and SDKs read it, so that a
/// machine set up for `aws s3` is set up for Flagpole.
///
/// - Credentials: with `--profile`, that profile; otherwise `AWS_ACCESS_KEY_ID` and
///   `AWS_SECRET_ACCESS_KEY` (with `AWS_SESSION_TOKEN`), else the profile `AWS_PROFILE` names,
///   else `default`. A profile is looked up in `AWS_SHARED_CREDENTIALS_FILE` (`~/.aws/credentials`),
///   then in `AWS_CONFIG_FILE` (`~/.aws/config`, where sections are `[profile NAME]`).
/// - Region: `--region`, `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's `region`, `us-east-1`.
/// - Endpoint: `--endpoint`, `AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`, the profile's
///   `endpoint_url`, else AWS's own.
///
/// Files are read on every call: a long-running `serve` picks up rotated keys at its next publish.
public struct AWSConfiguration: Sendable {
    public var credentials: AWSCredentials
    public var region: String
    public var endpoint: String?

    public static func resolve(
        profile explicitProfile: String? = nil, region explicitRegion: String? = nil,
        endpoint explicitEndpoint: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(PublishError) -> AWSConfiguration {
        func variable(_ name: String) -> String? {
            environment[name].flatMap { $0.isEmpty ? nil : $0 }
        }
        let home = variable("HOME") ?? NSHomeDirectory()
        let credentialsFile = variable("AWS_SHARED_CREDENTIALS_FILE") ?? "\(home)/.aws/credentials"
        let configFile = variable("AWS_CONFIG_FILE") ?? "\(home)/.aws/config"
        let profileName = explicitProfile ?? variable("AWS_PROFILE") ?? "default"
        let fromCredentialsFile = try ProfileFile.read(credentialsFile, isConfig: false)[profileName]
        let fromConfigFile = try ProfileFile.read(configFile, isConfig: true)[profileName]

        let credentials: AWSCredentials
        if explicitProfile == nil, let id = variable("AWS_ACCESS_KEY_ID"),
            let secret = variable("AWS_SECRET_ACCESS_KEY")
        {
            credentials = AWSCredentials(
                accessKeyID: id, secretAccessKey: secret, sessionToken: variable("AWS_SESSION_TOKEN"),
                source: "the environment (AWS_ACCESS_KEY_ID)")
        } else if let found = fromCredentialsFile?.credentials(source: "profile \(profileName) in \(credentialsFile)")
            ?? fromConfigFile?.credentials(source: "profile \(profileName) in \(configFile)")
        {
            credentials = found
        } else if explicitProfile != nil || variable("AWS_PROFILE") != nil {
            throw .noCredentials(
                "The profile \(profileName) has no aws_access_key_id and aws_secret_access_key in \(credentialsFile) or \(configFile)."
            )
        } else {
            throw .noCredentials(
                "No AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or add a [default] profile to \(credentialsFile) (or name one with --profile or AWS_PROFILE)."
            )
        }
        let region =
            explicitRegion ?? variable("AWS_REGION") ?? variable("AWS_DEFAULT_REGION")
            ?? fromConfigFile?.values["region"] ?? fromCredentialsFile?.values["region"] ?? "us-east-1"
        let endpoint =
            explicitEndpoint ?? variable("AWS_ENDPOINT_URL_S3") ?? variable("AWS_ENDPOINT_URL")
            ?? fromConfigFile?.values["endpoint_url"]
        return AWSConfiguration(credentials: credentials, region: region, endpoint: endpoint)
    }
}

/// An AWS shared credentials or config file: INI sections of `key = value` lines.
struct ProfileFile {
    struct Profile {
        var values: [String: String] = [:]

        func credentials(source: String) -> AWSCredentials? {
            guard let id = values["aws_access_key_id"], let secret = values["aws_secret_access_key"] else { return nil }
            return AWSCredentials(
                accessKeyID: id, secretAccessKey: secret, sessionToken: values["aws_session_token"], source: source)
        }
    }

    /// The profiles of the file at `path` by name; none when it doesn't exist. In a config
    /// file, `[profile NAME]` names NAME and `[default]` the default; other sections
    /// (`[sso-session …]`, `[services …]`) are not profiles.
    static func read(_ path: String, isConfig: Bool) throws(PublishError) -> [String: Profile] {
        guard FileManager.default.fileExists(atPath: path) else { return [:] }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw .noCredentials("Cannot read \(path): check its permissions.")
        }
        // `/dev/null` (a way to say "no file") reads as empty, not as an error.
        let data = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
        return parse(String(decoding: data, as: UTF8.self), isConfig: isConfig)
    }

    static func parse(_ text: String, isConfig: Bool) -> [String: Profile] {
        var profiles: [String: Profile] = [:]
        var current: String?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                let name = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                if !isConfig || name == "default" {
                    current = name
                } else if name.hasPrefix("profile ") {
                    current = name.dropFirst("profile ".count).trimmingCharacters(in: .whitespaces)
                } else {
                    current = nil
                }
                if let current, profiles[current] == nil { profiles[current] = Profile() }
                continue
            }
            // Indented lines continue a nested block (`s3 =` then `  addressing_style = path`): skipped.
            guard let current, !(rawLine.first?.isWhitespace ?? false),
                let equals = line.firstIndex(of: "=")
            else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            profiles[current]!.values[key] = value
        }
        return profiles
    }
}
