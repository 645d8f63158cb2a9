import FlagpoleCore
import Foundation

/// A ramp's row, with the names of its environment and test.
struct RampRow: Sendable {
    /// 0 until inserted.
    var id: Int64
    let environmentID: Int64
    let featureID: Int64
    let path: EnvironmentPath
    let feature: String
    /// The variation that grows.
    let variation: String
    /// The test's biases before the ramp's first step (or at its last resume).
    var base: [Double]
    let steps: [Double]
    let hold: RampHold
    let guards: [RampGuard]
    let onFailure: RampFailureAction
    var state: RampState
    var reason: String?
    var nextStep: Int
    var dueAt: Date?
    var knownRevision: Int
    let createdBy: String
    let createdAt: Date
    /// When the guards last looked at the holding step.
    var lookedAt: Date?

    /// Who its scheduled steps are written by: the ramp, naming who created it.
    var actor: String { "ramp:\(id) by \(createdBy)" }

    /// How the ramp grows `feature`, the test as it is now.
    ///
    /// - throws: as `RampCourse.init(feature:variation:in:)`, when the test changed under the ramp.
    func course(of feature: Feature) throws -> RampCourse {
        var course = try RampCourse(feature: feature, variation: variation)
        course.base = base
        return course
    }
}

/// The one home of every statement on `ramps`, `ramp_steps`, `ramp_events` and `ramp_looks`.
struct RampTable {
    let db: Transaction

    private static let select = """
        SELECT r.id, r.environment_id, r.feature_id, t.slug, e.name, f.name, r.variation, r.steps, r.base_biases,
            r.hold, r.state, r.reason, r.next_step, r.due_at, r.known_revision, r.created_by, r.created_at, r.guards, r.on_failure, r.looked_at
        FROM ramps r JOIN environments e ON e.id = r.environment_id JOIN tenants t ON t.id = r.tenant_id
            JOIN features f ON f.id = r.feature_id
        """

    private func ramps(where condition: String, _ arguments: SQLArguments) throws -> [RampRow] {
        try db.rows("\(Self.select) WHERE \(condition) ORDER BY r.id", arguments).map { row in
            return RampRow(
                id: row[0], environmentID: row[1], featureID: row[2],
                path: EnvironmentPath(
                    tenant: TenantSlug(rawValue: row[3]), environment: EnvironmentName(rawValue: row[4])),
                feature: row[5], variation: row[6], base: try Self.numbers(row[8]), steps: try Self.numbers(row[7]),
                hold: try Self.hold(row[9]), guards: try Self.guards(row[17]),
                onFailure: RampFailureAction(rawValue: row[18]) ?? .pause,
                state: RampState(rawValue: row[10]) ?? .paused, reason: row[11], nextStep: row[12],
                dueAt: (row[13] as Int64?).map(Date.init(unixMilliseconds:)), knownRevision: row[14],
                createdBy: row[15],
                createdAt: Date(unixMilliseconds: row[16]),
                lookedAt: (row[19] as Int64?).map(Date.init(unixMilliseconds:)))
        }
    }

    /// The ramp with row id `id`.
    func ramp(id: Int64) throws -> RampRow? {
        try ramps(where: "r.id = ?", [id]).first
    }

    /// The test's running or paused ramp.
    func active(featureID: Int64) throws -> RampRow? {
        try ramps(where: "r.feature_id = ? AND r.state IN ('running', 'paused')", [featureID]).first
    }

    /// The test's ramps, oldest first.
    func ramps(featureID: Int64) throws -> [RampRow] {
        try ramps(where: "r.feature_id = ?", [featureID])
    }

    /// The environment's ramps, oldest first.
    func ramps(in scope: EnvironmentScope) throws -> [RampRow] {
        try ramps(where: "r.tenant_id = ? AND r.environment_id = ?", [scope.tenant.id, scope.id])
    }

    /// The ids of the running ramps whose next step is due at `now`, in every tenant, soonest first.
    func due(at now: Date) throws -> [Int64] {
        try db.values(
            Int64.self, "SELECT id FROM ramps WHERE state = 'running' AND due_at <= ? ORDER BY due_at, id",
            [now.unixMilliseconds])
    }

    /// Inserts `ramp` (running, at its first step) and returns its id.
    func insert(_ ramp: RampRow, scope: EnvironmentScope) throws -> Int64 {
        try db.insertReturningID(
            """
            INSERT INTO ramps (tenant_id, environment_id, feature_id, variation, steps, base_biases, hold, guards,
                on_failure, state, next_step, due_at, known_revision, created_by, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', 0, ?, ?, ?, ?) RETURNING id
            """,
            [
                scope.tenant.id, scope.id, ramp.featureID, ramp.variation, Self.text(ramp.steps), Self.text(ramp.base),
                ramp.hold.description, JSONValue.array(ramp.guards.map { .string($0.description) }).storedText,
                ramp.onFailure.rawValue, ramp.dueAt?.unixMilliseconds, ramp.knownRevision, ramp.createdBy,
                ramp.createdAt.unixMilliseconds,
            ])
    }

    /// Writes the ramp's state, next step, due time, known revision, base biases and last look.
    func update(_ ramp: RampRow) throws {
        try db.execute(
            """
            UPDATE ramps SET state = ?, reason = ?, next_step = ?, due_at = ?, known_revision = ?, base_biases = ?,
                looked_at = ?
            WHERE id = ?
            """,
            [
                ramp.state.rawValue, ramp.reason, ramp.nextStep, ramp.dueAt?.unixMilliseconds, ramp.knownRevision,
                Self.text(ramp.base), ramp.lookedAt?.unixMilliseconds, ramp.id,
            ])
    }

    // MARK: Steps and events

    /// Records a step as applied: the row's key makes a second attempt at the step fail, so
    /// this and the step's revision commit once.
    func insertStep(_ step: RampStepRecord, of rampID: Int64) throws {
        try db.execute(
            """
            INSERT INTO ramp_steps (ramp_id, step, revision, applied_by, applied_at, folded, moved_users)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """,
            [
                rampID, step.step, step.revision, step.appliedBy, step.appliedAt.unixMilliseconds,
                step.folded.isEmpty ? nil : Self.text(step.folded.map(Double.init)), step.movedUsers,
            ])
    }

    func steps(of rampID: Int64) throws -> [RampStepRecord] {
        try db.rows(
            """
            SELECT step, revision, applied_by, applied_at, folded, moved_users FROM ramp_steps
            WHERE ramp_id = ? ORDER BY step
            """, [rampID]
        ).map { row in
            RampStepRecord(
                step: row[0], revision: row[1], appliedBy: row[2], appliedAt: Date(unixMilliseconds: row[3]),
                folded: try (row[4] as String?).map(Self.numbers)?.map { Int($0) } ?? [], movedUsers: row[5])
        }
    }

    func insertEvent(_ event: RampEvent, of rampID: Int64) throws {
        try db.execute(
            "INSERT INTO ramp_events (ramp_id, kind, actor, detail, at) VALUES (?, ?, ?, ?, ?)",
            [rampID, event.kind.rawValue, event.actor, event.detail, event.at.unixMilliseconds])
    }

    func events(of rampID: Int64) throws -> [RampEvent] {
        try db.rows("SELECT kind, actor, detail, at FROM ramp_events WHERE ramp_id = ? ORDER BY id", [rampID]).map {
            RampEvent(
                kind: RampEvent.Kind(rawValue: $0[0]) ?? .paused, actor: $0[1], detail: $0[2],
                at: Date(unixMilliseconds: $0[3]))
        }
    }

    /// The running guarded ramps whose holding step the guards last looked at before `time` (or
    /// never), in every tenant.
    func unlooked(before time: Date) throws -> [Int64] {
        try db.values(
            Int64.self,
            """
            SELECT id FROM ramps WHERE state = 'running' AND guards <> '[]' AND next_step > 0
                AND (looked_at IS NULL OR looked_at < ?) ORDER BY id
            """, [time.unixMilliseconds])
    }

    // MARK: Looks

    /// Records a guard's look at a step's hold, replacing the one before and counting it.
    func recordLook(_ look: GuardLook, of rampID: Int64, step: Int, guardIndex: Int, at time: Date) throws {
        try db.execute(
            """
            INSERT INTO ramp_looks (ramp_id, step, guard, verdict, figures, reason, looks, at)
            VALUES (?, ?, ?, ?, ?, ?, 1, ?)
            ON CONFLICT (ramp_id, step, guard) DO UPDATE SET verdict = excluded.verdict, figures = excluded.figures,
                reason = excluded.reason, looks = ramp_looks.looks + 1, at = excluded.at
            """,
            [
                rampID, step, guardIndex, look.verdict.rawValue, Self.text(look.figures), look.reason,
                time.unixMilliseconds,
            ])
    }

    func looks(of rampID: Int64) throws -> [RampLookRecord] {
        try db.rows(
            "SELECT step, guard, verdict, figures, reason, looks, at FROM ramp_looks WHERE ramp_id = ? ORDER BY step, guard",
            [rampID]
        ).map { row in
            RampLookRecord(
                step: row[0], guardIndex: row[1], verdict: GuardVerdict(rawValue: row[2]) ?? .wait,
                figures: (try? JSONDecoder().decode(GuardFigures.self, from: Data((row[3] as String).utf8)))
                    ?? GuardFigures(),
                reason: row[4], looks: row[5], at: Date(unixMilliseconds: row[6]))
        }
    }

    // MARK: Stored numbers

    private static func text(_ figures: GuardFigures) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: (try? encoder.encode(figures)) ?? Data("{}".utf8), as: UTF8.self)
    }

    private static func guards(_ text: String) throws -> [RampGuard] {
        guard case .array(let values) = try JSONValue(storedText: text) else {
            throw StorageError.storage(reason: "a ramp's stored guards are not a list: \(text.prefix(60))")
        }
        return try values.map { value in
            guard case .string(let text) = value, let parsed = try? RampGuard(parsing: text) else {
                throw StorageError.storage(reason: "a ramp's stored guard is not one: \(value.summary)")
            }
            return parsed
        }
    }

    private static func text(_ numbers: [Double]) -> String {
        JSONValue.array(numbers.map(JSONValue.number)).storedText
    }

    private static func hold(_ text: String) throws -> RampHold {
        do {
            return try RampHold(parsing: text)
        } catch {
            throw StorageError.storage(reason: "a ramp's stored hold is not one: \(text.prefix(60))")
        }
    }

    private static func numbers(_ text: String) throws -> [Double] {
        guard case .array(let values) = try JSONValue(storedText: text) else {
            throw StorageError.storage(reason: "a ramp's stored numbers are not a list: \(text.prefix(60))")
        }
        return try values.map { value in
            guard case .number(let number) = value else {
                throw StorageError.storage(reason: "a ramp's stored list holds \(value.summary)")
            }
            return number
        }
    }
}

extension Transaction {
    /// Ramps, their steps, their events and their guards' looks.
    var ramps: RampTable { RampTable(db: self) }
}
