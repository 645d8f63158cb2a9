-- Flagpole schema, version 8: the publish log.
--
-- Each publish to object storage (`flagpole publish`, or `serve --publish-to` after every new
-- revision) leaves one row per environment it covered: which revision, how many objects it
-- wrote, whether it succeeded, and what the CDN purge hook answered. The dashboard, /metrics and
-- `flagpole publish status` read the latest row per target and environment to say whether the
-- bucket is up to date, behind or failing. Rows beyond the latest 100 of a target and
-- environment are deleted as new ones come.
CREATE TABLE publish_log (
    id INTEGER PRIMARY KEY,
    -- s3://BUCKET[/PREFIX] at its endpoint: `s3://cdn/flags at https://s3.eu-west-1.amazonaws.com`.
    target TEXT NOT NULL,
    tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
    environment_id INTEGER NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
    revision INTEGER NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('published', 'unchanged', 'failed')),
    objects_written INTEGER NOT NULL CHECK (objects_written >= 0),
    error TEXT CHECK ((error IS NULL) = (outcome != 'failed')),
    -- The purge hook: NULL when none is configured or nothing changed.
    purge_outcome TEXT CHECK (purge_outcome IN ('sent', 'failed')),
    purge_error TEXT,
    started_at INTEGER NOT NULL,
    finished_at INTEGER NOT NULL
);
CREATE INDEX publish_log_by_environment ON publish_log (environment_id, target, id);
