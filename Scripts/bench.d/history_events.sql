-- Fills assignment_events with :events synthetic events over :users users ("user-0" …) and
-- the tests of one environment, for the history benchmark of Scripts/bench.
--
-- Events arrive as they would over time: round after round, each test in turn goes through
-- all users, so one user's events lie :users rows apart and a lookup touches as many pages
-- as in a real table. Within a pass users come in a scattered order (n * 7919 mod :users;
-- 7919 is a prime, so each user appears once per pass). The first round writes 'first'
-- events; each later round moves every user to the test's next variation ('bias' events
-- from the previous one) under the next revision number.
--
-- Scripts/bench drops the table's indexes before running this and re-creates them after with
-- their own SQL from sqlite_master: the very same indexes, built faster than row by row.
-- :tenant_id and :environment_id come from a tenant made by `flagpole tenant create`, and the
-- tests from a `flagpole import`, so the query's joins see a real environment. :start_ms is
-- the time of the first event (Unix milliseconds); events are 10 ms apart.
PRAGMA foreign_keys = ON;
PRAGMA synchronous = OFF;
PRAGMA cache_size = -524288;

CREATE TEMP TABLE tests AS
    SELECT row_number() OVER (ORDER BY id) - 1 AS k, id AS feature_id, variation_count AS count
      FROM features
     WHERE environment_id = :environment_id AND tenant_id = :tenant_id AND variation_count >= 2;
CREATE TEMP TABLE choices AS
    SELECT t.k, v.position, v.name FROM temp.tests t JOIN variations v ON v.feature_id = t.feature_id
     WHERE v.position < t.count;
CREATE UNIQUE INDEX temp.choices_by_position ON choices(k, position);

BEGIN;
INSERT INTO assignment_events (id, tenant_id, environment_id, feature_id, user_id, previous_variation, variation,
                               point, revision, reason, created_at)
SELECT e.n + 1, :tenant_id, :environment_id, t.feature_id, 'user-' || e.u, previous.name, current.name,
       (e.n * 40503 % 10000000) / 100000.0, 1 + e.round,
       CASE WHEN e.round = 0 THEN 'first' ELSE 'bias' END,
       :start_ms + e.n * 10
  FROM (SELECT n, n * 7919 % :users AS u, n / :users % g.tests AS k, n / :users / g.tests AS round
          FROM (SELECT value - 1 AS n FROM generate_series(1, :events)),
               (SELECT count(*) AS tests FROM temp.tests) g) e
  JOIN temp.tests t ON t.k = e.k
  -- Each round moves the user to the next variation, so every event is a change of group.
  JOIN temp.choices current ON current.k = e.k AND current.position = (e.u + e.round) % t.count
  LEFT JOIN temp.choices previous ON e.round > 0 AND previous.k = e.k AND previous.position = (e.u + e.round - 1) % t.count;
-- The history's deltas, which the store writes beside every event it writes (migration 0006):
-- +1 for the variation each event enters, -1 for the one it leaves, per test and minute.
INSERT INTO assignment_deltas (tenant_id, environment_id, feature_id, minute, variation, users)
SELECT tenant_id, environment_id, feature_id, minute, variation, sum(users) FROM (
    SELECT tenant_id, environment_id, feature_id, created_at / 60000 AS minute, variation, 1 AS users
      FROM assignment_events
    UNION ALL
    SELECT tenant_id, environment_id, feature_id, created_at / 60000, previous_variation, -1
      FROM assignment_events WHERE previous_variation IS NOT NULL)
 GROUP BY feature_id, minute, variation
HAVING sum(users) <> 0;
COMMIT;
