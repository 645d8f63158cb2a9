-- Flagpole schema, version 10: the attributes users were last seen with, and what decided a
-- recorded group (docs/TARGETING.md).

-- Each user's last attributes in an environment: what rule changes are planned against. Written
-- only when their fingerprint changes (or once a day, to keep `seen_hour` coarse but current),
-- so apps' fetches stay reads.
CREATE TABLE user_attributes (
    tenant_id INTEGER NOT NULL,
    environment_id INTEGER NOT NULL,
    user_id TEXT NOT NULL,
    -- Canonical JSON: one object of strings, numbers and booleans, keys in code-point order.
    attributes TEXT NOT NULL CHECK (json_valid(attributes)),
    -- UserAttributes.fingerprint of `attributes`.
    fingerprint INTEGER NOT NULL,
    -- Unix hours.
    seen_hour INTEGER NOT NULL,
    PRIMARY KEY (environment_id, user_id),
    FOREIGN KEY (environment_id, tenant_id) REFERENCES environments(id, tenant_id) ON DELETE CASCADE
) WITHOUT ROWID;

-- The id of the rule that decided the group; NULL when the biases (or an override) did.
ALTER TABLE assignments ADD COLUMN rule TEXT;
-- 1 once the user's pinned features.json has been served with this group: a FeatureFlags app
-- then keeps its point for good (FORMAT §6), so a rule change can't move it, while a bias change
-- still does. Rows recorded before this version may have reached an app: 1.
ALTER TABLE assignments ADD COLUMN pinned INTEGER NOT NULL DEFAULT 1 CHECK (pinned IN (0, 1));
-- The point the app was given when it is not `point`: a rule's variation that the user's own
-- point does not lie in. Bias changes move such a user by this point.
ALTER TABLE assignments ADD COLUMN app_point REAL CHECK (app_point >= 0 AND app_point < 100);
CREATE INDEX assignments_at_app_points ON assignments(feature_id, app_point) WHERE app_point IS NOT NULL;

-- Events name the rule that decided the new group, and two reasons join: `rules` (a revision
-- changed rules or segments) and `attributes` (the user came back with attributes a rule
-- decides otherwise). SQLite can't change a CHECK in place: the table is rebuilt, ids kept.
CREATE TABLE assignment_events_with_rules (
    id INTEGER PRIMARY KEY,
    tenant_id INTEGER NOT NULL,
    environment_id INTEGER NOT NULL,
    feature_id INTEGER NOT NULL,
    user_id TEXT NOT NULL,
    -- NULL for a first assignment.
    previous_variation TEXT,
    variation TEXT NOT NULL,
    point REAL NOT NULL,
    revision INTEGER NOT NULL,
    reason TEXT NOT NULL CHECK (reason IN (
        'first', 'bias', 'variations', 'enable', 'disable', 'rollout', 'rollback', 'override', 'override-cleared',
        'rules', 'attributes')),
    created_at INTEGER NOT NULL,
    rule TEXT,
    FOREIGN KEY (feature_id, environment_id, tenant_id) REFERENCES features(id, environment_id, tenant_id) ON DELETE CASCADE
);
INSERT INTO assignment_events_with_rules (id, tenant_id, environment_id, feature_id, user_id, previous_variation,
    variation, point, revision, reason, created_at)
SELECT id, tenant_id, environment_id, feature_id, user_id, previous_variation, variation, point, revision, reason,
    created_at
FROM assignment_events;
DROP TABLE assignment_events;
ALTER TABLE assignment_events_with_rules RENAME TO assignment_events;
CREATE INDEX assignment_events_by_user ON assignment_events(environment_id, user_id, id);
CREATE INDEX assignment_events_by_feature ON assignment_events(feature_id, id);
CREATE INDEX assignment_events_by_environment ON assignment_events(environment_id, id);

-- Users forgotten at a data-protection request (`flagpole user forget`): who asked the store to
-- forget someone, when, and how many rows went, never whom.
CREATE TABLE erasures (
    id INTEGER PRIMARY KEY,
    tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    actor TEXT NOT NULL,
    rows_deleted INTEGER NOT NULL CHECK (rows_deleted >= 0),
    created_at INTEGER NOT NULL
);
