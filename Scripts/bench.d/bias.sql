-- The baseline for `flagpole bias set`: the sqlite3 shell re-evaluating the recorded users of
-- one test after a bias change, in one transaction: an event for each user whose point lies
-- in the range that changed hands (:lower ..< :upper, now :variation's), then the same users'
-- new group. This is the least SQL that leaves the same assignments and events; flagpole
-- also counts the movers first (the plan it prints) and writes the new revision (its
-- document and audit rows).
--
-- Connection set up as flagpole's (see assign.sql). :feature_id, :revision,
-- :lower, :upper and :variation are replaced by Scripts/bench.
PRAGMA foreign_keys = ON;
PRAGMA cache_size = -65536;
PRAGMA temp_store = MEMORY;
PRAGMA synchronous = NORMAL;
BEGIN IMMEDIATE;
INSERT INTO assignment_events (tenant_id, environment_id, feature_id, user_id, previous_variation, variation,
                               point, revision, reason, created_at)
SELECT tenant_id, environment_id, feature_id, user_id, variation, ':variation', point, :revision, 'bias',
       CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
  FROM assignments
 WHERE feature_id = :feature_id AND point >= :lower AND point < :upper AND variation <> ':variation' AND is_override = 0;
UPDATE assignments
   SET variation = ':variation', revision = :revision, assigned_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)
 WHERE feature_id = :feature_id AND point >= :lower AND point < :upper AND variation <> ':variation' AND is_override = 0;
COMMIT;
