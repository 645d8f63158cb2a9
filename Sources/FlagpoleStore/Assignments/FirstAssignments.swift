import FlagpoleCore
import Foundation

/// Records users' first assignments to one test, with a `first` event each: the hot path of
/// bulk assignment.
///
/// Users are staged in a temporary table with one prepared insert each, then copied into
/// `assignments` and `assignment_events` by one `INSERT … SELECT` per table, so SQLite does
/// the bulk of the work in its own loop, as the `sqlite3` shell's `.import` then `INSERT …
/// SELECT` would. Points are staged as the doubles `UserPoints` computes, bound as they are.
///
/// On PostgreSQL the same statements run, and users are staged many to a statement (each
/// statement is a round trip), in a temporary table of the session.
struct FirstAssignments {
    /// Users per batch when some may be recorded already: large enough to amortise the set
    /// statements, small enough for the batch to stay in cache.
    static let batchSize = 4096
    /// Users staged by one statement at most, on PostgreSQL: 4 × 1024 parameters, well under
    /// its 65 535.
    static let stagedPerStatement = 1024

    private let db: Transaction
    private let scope: EnvironmentScope
    private let feature: StoredFeature
    private let points: UserPoints
    private let ranges: VariationRanges
    private let revision: Int
    /// Unix milliseconds, as the per-user tables keep time.
    private let time: Int64
    /// Whether the test had recorded users when this began. Without any (the first import of a
    /// user base), the only users already recorded are those listed earlier in the same call.
    private let hadRecordedUsers: Bool
    /// The statements of a call, prepared once and bound as they go.
    private let prepared: Prepared
    /// Adds the users recorded to the history's deltas.
    private let deltas: AssignmentWriter

    /// The statements of a call.
    private struct Prepared {
        let clear: any SQLStatement
        let known: any SQLStatement
        let unstage: any SQLStatement
        let insert: any SQLStatement
        let event: any SQLStatement
    }

    /// Users staged and not sent yet, and how many were staged since the table was cleared (each
    /// user's ordinal, which orders the events).
    private struct Staging {
        var pending: [Assignment] = []
        var count: Int64 = 0
    }

    init(_ db: Transaction, scope: EnvironmentScope, feature: StoredFeature, revision: Int, now: Date) throws {
        self.db = db
        self.scope = scope
        self.feature = feature
        deltas = AssignmentWriter(db: db, scope: scope, revision: revision, now: now)
        self.points = UserPoints(salt: feature.salt)
        self.ranges = feature.feature.assignmentRanges
        self.revision = revision
        self.time = now.unixMilliseconds
        hadRecordedUsers = try db.assignments.hasRecordedUsers(featureID: feature.id)
        // A temporary table lasts as long as the connection (SQLite) or the session (PostgreSQL),
        // and its unqualified name finds it before any other.
        try db.execute(db.text(of: Self.creatingStagingTable))
        prepared = Prepared(
            clear: try db.statement(Self.clearing, cached: false),
            known: try db.statement(Self.selectingKnown, cached: false),
            unstage: try db.statement(Self.unstagingKnown, cached: false),
            insert: try db.statement(Self.inserting, cached: false),
            event: try db.statement(Self.insertingFirstEvents, cached: false))
        for statement in [prepared.insert, prepared.event] {
            statement.bind(scope.tenant.id, at: 1)
            statement.bind(scope.id, at: 2)
            statement.bind(feature.id, at: 3)
            statement.bind(Int64(revision), at: 4)
            statement.bind(now.unixMilliseconds, at: 5)
        }
        prepared.known.bind(feature.id, at: 1)
        prepared.unstage.bind(feature.id, at: 1)
    }

    // MARK: Statements
    // Each on the staging table, with `?`s in the order of their arguments.

    /// The staging table. PostgreSQL's columns compare bytes, as SQLite's do (docs/POSTGRES.md).
    private static let creatingStagingTable = DialectSQL(
        sqlite: """
            CREATE TEMP TABLE IF NOT EXISTS staged_points (user_id TEXT NOT NULL, point REAL NOT NULL,
                variation TEXT NOT NULL, ordinal INTEGER NOT NULL)
            """,
        postgres: """
            CREATE TEMP TABLE IF NOT EXISTS staged_points (user_id text COLLATE "C" NOT NULL,
                point double precision NOT NULL, variation text COLLATE "C" NOT NULL, ordinal bigint NOT NULL)
            """)

    /// Empties the staging table: by TRUNCATE on PostgreSQL, which never vacuums a temporary
    /// table, so the dead rows of every batch would stay for the next ones to scan; SQLite has
    /// no TRUNCATE, and reuses a deleted row's pages.
    private static let clearing = DialectSQL(
        sqlite: "DELETE FROM staged_points", postgres: "TRUNCATE staged_points")

    /// The staged users recorded already, with their recorded groups. Argument: the feature id.
    private static let selectingKnown = """
        SELECT s.user_id, a.point, a.variation, a.revision, a.is_override
        FROM staged_points s
        JOIN assignments a ON a.feature_id = ? AND a.point = s.point AND a.user_id = s.user_id
        """

    /// Unstages the users `selectingKnown` reads. Argument: the feature id.
    private static let unstagingKnown = """
        DELETE FROM staged_points
        WHERE EXISTS (
            SELECT 1 FROM assignments a
            WHERE a.feature_id = ? AND a.point = staged_points.point AND a.user_id = staged_points.user_id)
        """

    /// Records the staged users. Arguments: tenant, environment, feature, revision, time.
    private static let inserting = """
        INSERT INTO assignments (tenant_id, environment_id, feature_id, revision, assigned_at, user_id, point, variation, pinned)
        SELECT ?, ?, ?, ?, ?, user_id, point, variation, FALSE FROM staged_points
        """

    /// Their `first` events, the same arguments, in the order the users were staged: SQLite's
    /// scan of the table has it (its rows are in insertion order, and a sort would cost the
    /// bulk path), PostgreSQL may read the table in any order and is told.
    private static let insertingFirstEvents = DialectSQL(
        sqlite: AssignmentWriter.insertingEvents(
            """
            SELECT ?, ?, ?, user_id, NULL, variation, point, ?, 'first', ?, NULL
            FROM staged_points
            """),
        postgres: AssignmentWriter.insertingEvents(
            """
            SELECT ?, ?, ?, user_id, NULL, variation, point, ?, 'first', ?, NULL
            FROM staged_points ORDER BY ordinal
            """))

    // MARK: Recording

    /// Hands each user's assignment to `report`, in order: users new to the test are recorded,
    /// in the group of their point (`isNew`); the others keep their recorded group and nothing
    /// is written for them.
    func record(_ users: [UserID], report: (_ assignment: Assignment, _ isNew: Bool) throws -> Void) throws {
        db.noteEveryUserChanged(in: scope)
        guard hadRecordedUsers else {
            try recordAllNew(users, report: report)
            return
        }
        for start in stride(from: 0, to: users.count, by: Self.batchSize) {
            try recordBatch(users[start..<min(start + Self.batchSize, users.count)], report: report)
        }
    }

    /// A test without recorded users: every user is new at their first listing, so all are
    /// staged, then copied at once.
    private func recordAllNew(_ users: [UserID], report: (Assignment, Bool) throws -> Void) throws {
        var staging = try clear()
        var listed = Set<UserID>(minimumCapacity: users.count)
        var added: [String: Int] = [:]
        for user in users {
            let assignment = self.assignment(of: user)
            let isFirstListing = listed.insert(user).inserted
            if isFirstListing {
                try stage(assignment, &staging)
                added[assignment.variation, default: 0] += 1
            }
            // A second listing reads as recorded, in the group just computed: nothing can move
            // a user within this transaction.
            try report(assignment, isFirstListing)
        }
        try send(&staging)
        try copy()
        try addDeltas(added)
    }

    /// The `first` events just copied, in the history's deltas.
    private func addDeltas(_ added: [String: Int]) throws {
        for (variation, users) in added { try deltas.addUsers(users, to: variation, featureID: feature.id) }
    }

    /// Some users may be recorded already: the batch is staged, those recorded are read back and
    /// unstaged, the rest copied.
    private func recordBatch(_ users: ArraySlice<UserID>, report: (Assignment, Bool) throws -> Void) throws {
        var staging = try clear()
        var listed = Set<UserID>()
        var computed: [(assignment: Assignment, isFirstListing: Bool)] = []
        computed.reserveCapacity(users.count)
        for user in users {
            let assignment = self.assignment(of: user)
            let isFirstListing = listed.insert(user).inserted
            if isFirstListing { try stage(assignment, &staging) }
            computed.append((assignment, isFirstListing))
        }
        try send(&staging)
        let recorded = try known()
        if !recorded.isEmpty { try unstage() }
        if listed.count > recorded.count { try copy() }
        var added: [String: Int] = [:]
        for (assignment, isFirstListing) in computed {
            if let before = recorded[assignment.user] {
                try report(before, false)
            } else {
                if isFirstListing { added[assignment.variation, default: 0] += 1 }
                try report(assignment, isFirstListing)
            }
        }
        try addDeltas(added)
    }

    /// The user's group by their point.
    private func assignment(of user: UserID) -> Assignment {
        let point = points.point(for: user.rawValue)
        let assignment = Assignment(
            user: user, feature: feature.feature.name, variation: ranges.variation(at: point)!, point: point,
            revision: revision, isOverride: false)
        return assignment
    }

    // MARK: Staging

    /// Empties the staging table.
    private func clear() throws -> Staging {
        try prepared.clear.execute()
        return Staging()
    }

    /// Stages one user, with the next ones, by `send`.
    private func stage(_ assignment: Assignment, _ staging: inout Staging) throws {
        staging.count += 1
        staging.pending.append(assignment)
        if staging.pending.count == Self.stagedPerStatement { try send(&staging) }
    }

    /// Stages the users `stage` kept, many to a statement (one round trip on PostgreSQL, one run
    /// of the statement on SQLite), by statements of a few lengths (powers of two), each prepared
    /// once and bound by position.
    private func send(_ staging: inout Staging) throws {
        var sent = 0
        var ordinal = staging.count - Int64(staging.pending.count)
        while sent < staging.pending.count {
            var length = 1
            while length * 2 <= staging.pending.count - sent { length *= 2 }
            let insert = try db.statement(
                "INSERT INTO staged_points (user_id, point, variation, ordinal) VALUES "
                    + repeatElement("(?, ?, ?, ?)", count: length).joined(separator: ", "), cached: true)
            for (row, assignment) in staging.pending[sent..<sent + length].enumerated() {
                let first = Int32(row * 4)
                insert.bind(assignment.user.rawValue, at: first + 1)
                insert.bind(assignment.point, at: first + 2)
                insert.bind(assignment.variation, at: first + 3)
                insert.bind(ordinal, at: first + 4)
                ordinal += 1
            }
            try insert.execute()
            sent += length
        }
        staging.pending.removeAll(keepingCapacity: true)
    }

    /// The staged users recorded already, with their recorded groups.
    private func known() throws -> [UserID: Assignment] {
        var recorded: [UserID: Assignment] = [:]
        try prepared.known.forEachRow { row in
            let user = UserID(rawValue: row.text(0))
            recorded[user] = Assignment(
                user: user, feature: feature.feature.name, variation: row.text(2), point: row.double(1),
                revision: Int(row.int(3)), isOverride: row.bool(4))
        }
        return recorded
    }

    /// Unstages the users recorded already.
    private func unstage() throws {
        try prepared.unstage.execute()
    }

    /// Copies the staged users into `assignments`, and their `first` events, in the order they
    /// were staged.
    private func copy() throws {
        try prepared.insert.execute()
        try prepared.event.execute()
    }
}
