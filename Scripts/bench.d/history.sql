-- The baseline for the history latency: flagpole's query for one user's events (the newest
-- 100, as FeatureStore.assignmentEvents runs it), run by the sqlite3 shell for each user of
-- the sample inside one statement, timed with .timer. It reads every column flagpole reads,
-- but has no statement to prepare, no transaction to open and no rows to hand over per user:
-- a floor, reported as the mean per user.
-- :environment_id, :tenant_id and :sample are replaced by Scripts/bench.
CREATE TEMP TABLE sample (user_id TEXT NOT NULL);
.import :sample sample
.timer on
SELECT count(*) AS users, sum(json_extract(result, '$[0]')) AS events, total(json_extract(result, '$[1]')) AS checksum
  FROM (SELECT (SELECT json_array(count(*), total(id + point + revision + created_at + length(user_id) + length(name)
                                                  + ifnull(length(previous_variation), 0) + length(variation) + length(reason)))
                  FROM (SELECT e.id, e.user_id, f.name, e.previous_variation, e.variation, e.point, e.revision, e.reason, e.created_at
                          FROM assignment_events e JOIN features f ON f.id = e.feature_id
                         WHERE e.environment_id = :environment_id AND e.tenant_id = :tenant_id AND e.user_id = s.user_id
                         ORDER BY e.id DESC LIMIT 100)) AS result
          FROM temp.sample s);
