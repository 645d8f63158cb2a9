import FlagpoleCore
import Foundation
import Logging
import PostgresNIO

/// One connection to a PostgreSQL database, for work that belongs to one session: migrating the
/// schema, copying a whole database in one transaction.
struct PostgresSession: Sendable {
    let connection: PostgresConnection
    let address: PostgresAddress
    let logger: Logger

    /// Connects and authenticates.
    ///
    /// - throws: `StorageError.cannotOpen` naming the address (never its password) and why.
    static func open(
        _ address: PostgresAddress, logger: Logger = Logger(label: "flagpole.postgres")
    ) async throws
        -> PostgresSession
    {
        let configuration: PostgresConnection.Configuration
        do {
            var options = PostgresConnection.Configuration(
                host: address.host, port: address.port, username: address.user, password: address.password,
                database: address.database, tls: try tls(address.tls))
            options.options.additionalStartupParameters = startupParameters
            configuration = options
        } catch {
            throw StorageError.cannotOpen(path: address.description, reason: "its TLS settings failed: \(error)")
        }
        let connection: PostgresConnection
        do {
            connection = try await PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: 1, logger: logger
            ).get()
        } catch {
            throw StorageError.cannotOpen(path: address.description, reason: describe(error))
        }
        let session = PostgresSession(connection: connection, address: address, logger: logger)
        do {
            try await session.requireUTF8()
        } catch {
            await session.close()
            throw error
        }
        return session
    }

    /// Text travels and is kept as UTF-8, as SQLite keeps it: a database in another encoding
    /// would store some names as other characters, or refuse them.
    private func requireUTF8() async throws {
        try await execute("SET client_encoding = 'UTF8'")
        let encoding = try await rows("SHOW server_encoding").first?.decode(String.self) ?? "unknown"
        guard encoding == "UTF8" else {
            throw StorageError.cannotOpen(
                path: address.description,
                reason:
                    "its encoding is \(encoding), and Flagpole keeps text as UTF-8; create the database with createdb --encoding=UTF8 --template=template0 NAME"
            )
        }
    }

    /// Sent on every connection Flagpole opens, its pool's included: text in UTF-8, and the
    /// process's id as `application_name`, so that `pg_stat_activity` (and `pg_locks` joined to it)
    /// tells which instance or command holds a connection, a lock or a long transaction.
    static let startupParameters = [
        ("client_encoding", "UTF8"),
        ("application_name", "flagpole (pid \(ProcessInfo.processInfo.processIdentifier))"),
    ]

    private static func tls(_ mode: PostgresAddress.TLSMode) throws -> PostgresConnection.Configuration.TLS {
        var unverified = TLSConfiguration.makeClientConfiguration()
        unverified.certificateVerification = .none
        switch mode {
        case .disable: return .disable
        case .prefer: return .prefer(try NIOSSLContext(configuration: unverified))
        case .require: return .require(try NIOSSLContext(configuration: unverified))
        case .verifyFull: return .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
        }
    }

    func close() async {
        try? await connection.close()
    }

    /// Runs `work` on a new session, closed when it returns or throws.
    static func with<T: Sendable>(
        _ address: PostgresAddress, _ work: (PostgresSession) async throws -> T
    ) async throws
        -> T
    {
        let session = try await open(address)
        do {
            let value = try await work(session)
            await session.close()
            return value
        } catch {
            await session.close()
            throw error
        }
    }

    /// Runs `sql`, which may hold several statements (a migration file), one statement at a time.
    func run(script sql: String) async throws {
        for statement in SQLScript.statements(sql) { try await execute(PostgresQuery(unsafeSQL: statement)) }
    }

    /// Runs one statement and returns its rows.
    func rows(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await Self.translating {
            var rows: [PostgresRow] = []
            for try await row in try await connection.query(query, logger: logger) { rows.append(row) }
            return rows
        }
    }

    /// Runs one statement, ignoring any rows.
    func execute(_ query: PostgresQuery) async throws {
        _ = try await rows(query)
    }

    /// Runs `work` between `begin` and `COMMIT`, rolling back when it throws.
    func transaction<T: Sendable>(
        begin: PostgresQuery = "BEGIN", _ work: () async throws -> T
    ) async throws -> T {
        try await execute(begin)
        do {
            let value = try await work()
            try await execute("COMMIT")
            return value
        } catch {
            try? await execute("ROLLBACK")
            throw error
        }
    }

    /// Keeps the driver's types out of user-facing errors.
    static func translating<T>(_ work: () async throws -> T) async throws -> T {
        do {
            return try await work()
        } catch let error as any FlagpoleError {
            throw error
        } catch {
            throw storageError(error)
        }
    }

    /// `unavailable` when the connection failed or the server is going away (SQLSTATE classes
    /// 08 and 57P): the operation may succeed once it is back. Otherwise a failure of the store.
    static func storageError(_ error: any Error) -> StorageError {
        guard let error = error as? PSQLError else {
            // A socket that failed under the driver (refused, reset).
            return error is IOError || error is ChannelError
                ? .unavailable(reason: describe(error)) : .storage(reason: describe(error))
        }
        if let state = error.serverInfo?[.sqlState] {
            return state.hasPrefix("08") || state.hasPrefix("57P")
                ? .unavailable(reason: describe(error)) : .storage(reason: describe(error))
        }
        switch error.code {
        case .connectionError, .serverClosedConnection, .uncleanShutdown, .clientClosedConnection, .poolClosed:
            return .unavailable(reason: describe(error))
        default:
            return .storage(reason: describe(error))
        }
    }

    /// What PostgreSQL said, or why the connection failed: `PSQLError`'s own description hides
    /// both, so that a log line can't leak a query's values.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        if let server = error.serverInfo {
            let message = server[.message] ?? "an error"
            let detail = server[.detail].map { " (\($0))" } ?? ""
            let state = server[.sqlState].map { " [SQLSTATE \($0)]" } ?? ""
            return "PostgreSQL: \(message)\(detail)\(state)"
        }
        if let underlying = error.underlying { return "\(underlying)" }
        return "\(error.code)"
    }
}
