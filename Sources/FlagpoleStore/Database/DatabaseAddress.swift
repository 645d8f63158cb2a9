import Foundation

/// Where a store lives: a SQLite file (the embedded default), or a PostgreSQL database that
/// several servers share.
public enum DatabaseAddress: Sendable, Hashable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(PostgresAddress)

    /// Reads what `--db` and `FLAGPOLE_DB` hold: a `postgres://` or `postgresql://` URL, as libpq
    /// writes them, else the path of a SQLite file.
    ///
    /// - throws: `StorageError.invalidAddress` for a PostgreSQL URL that can't be used.
    public init(parsing text: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let lowered = text.lowercased()
        if lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") {
            self = .postgres(try PostgresAddress(url: text, environment: environment))
        } else {
            self = .sqlite(path: text)
        }
    }

    /// For messages: the path, or the URL without its password.
    public var description: String {
        switch self {
        case .sqlite(let path): path
        case .postgres(let address): address.description
        }
    }
}

/// A PostgreSQL database, from a URL in libpq's form:
/// `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]`.
///
/// What the URL leaves out comes from libpq's environment variables (`PGUSER`, `PGPASSWORD`,
/// `PGHOST`, `PGPORT`, `PGDATABASE`, `PGSSLMODE`), then Flagpole's defaults: host 127.0.0.1 (libpq
/// would try a Unix socket, which Flagpole doesn't speak), port 5432, the user `postgres` (libpq
/// would take the system user's name), a database named like the user, `sslmode=prefer`.
public struct PostgresAddress: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var tls: TLSMode

    /// libpq's `sslmode`, of which these three are meaningful without certificates of our own.
    public enum TLSMode: String, Sendable, Hashable, CaseIterable {
        /// Plain TCP.
        case disable
        /// TLS when the server offers it, without checking its certificate (libpq's default).
        case prefer
        /// TLS or no connection, without checking the certificate, as libpq's `require`.
        case require
        /// TLS with the certificate checked against the system's roots and the host name.
        case verifyFull = "verify-full"
    }

    public init(url text: String, environment: [String: String] = [:]) throws {
        func invalid(_ reason: String) -> StorageError {
            StorageError.invalidAddress(address: Self.redacted(text), reason: reason)
        }
        guard let components = URLComponents(string: text) else {
            throw invalid("it is not a URL; write postgres://USER:PASSWORD@HOST:PORT/DATABASE")
        }
        var options: [String: String] = [:]
        for item in components.queryItems ?? [] {
            guard let value = item.value else { throw invalid("the option \(item.name) has no value") }
            options[item.name] = value
        }
        for name in options.keys where !["sslmode", "host", "port", "user", "password", "dbname"].contains(name) {
            throw invalid("the option \(name) is not one Flagpole reads (sslmode, host, port, user, password, dbname)")
        }
        let host = options["host"] ?? components.host.flatMap { $0.isEmpty ? nil : $0 } ?? environment["PGHOST"]
        self.host = host ?? "127.0.0.1"
        if self.host.hasPrefix("/") {
            throw invalid("Unix sockets are not supported; give the server's TCP address, such as 127.0.0.1")
        }
        let portText = options["port"] ?? components.port.map(String.init) ?? environment["PGPORT"]
        if let portText {
            guard let port = Int(portText), (1...65_535).contains(port) else {
                throw invalid("the port \(portText) is not a number from 1 to 65535")
            }
            self.port = port
        } else {
            self.port = 5432
        }
        self.user =
            options["user"] ?? components.user.flatMap { $0.isEmpty ? nil : $0 } ?? environment["PGUSER"] ?? "postgres"
        self.password = options["password"] ?? components.password ?? environment["PGPASSWORD"]
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        if path.contains("/") { throw invalid("the path names more than a database: \(path)") }
        self.database = options["dbname"] ?? (path.isEmpty ? nil : path) ?? environment["PGDATABASE"] ?? user
        let mode = options["sslmode"] ?? environment["PGSSLMODE"] ?? TLSMode.prefer.rawValue
        guard let tls = TLSMode(rawValue: mode) else {
            throw invalid(
                "sslmode=\(mode) is not one Flagpole supports (\(TLSMode.allCases.map(\.rawValue).joined(separator: ", ")))"
            )
        }
        self.tls = tls
    }

    /// The URL with the password left out, for logs and messages.
    public var description: String {
        "postgres://\(user)@\(host.contains(":") ? "[\(host)]" : host):\(port)/\(database)?sslmode=\(tls.rawValue)"
    }

    /// `text` with its passwords hidden, for messages about a URL that could not be read: the
    /// user information's past its first colon (up to the authority's last `@`, as a password
    /// may hold an unencoded one) and any `password=` option's.
    static func redacted(_ text: String) -> String {
        var text = text
        if let scheme = text.range(of: "://") {
            let authorityEnd = text[scheme.upperBound...].firstIndex { $0 == "/" || $0 == "?" } ?? text.endIndex
            if let at = text.range(of: "@", options: .backwards, range: scheme.upperBound..<authorityEnd),
                let colon = text.range(of: ":", range: scheme.upperBound..<at.lowerBound)
            {
                text.replaceSubrange(colon.upperBound..<at.lowerBound, with: "***")
            }
        }
        return text.replacing(#/([?&]password=)[^&]*/#) { "\($0.output.1)***" }
    }
}
