-- Flagpole schema, version 14: ramps, phased roll-outs that run themselves (docs/RAMPS.md). A
-- ramp grows one variation of a test step by step; each step is one revision, applied by
-- `flagpole serve` or `flagpole tick` when its hold is over.
--
-- Times are Unix milliseconds, as in 0002.

CREATE TABLE ramps (
    id INTEGER PRIMARY KEY,
    tenant_id INTEGER NOT NULL,
    environment_id INTEGER NOT NULL,
    -- The test: features keep their row through archive and return.
    feature_id INTEGER NOT NULL REFERENCES features(id) ON DELETE CASCADE,
    -- The variation that grows, as the app stores it.
    variation TEXT NOT NULL,
    -- The growing variation's share at each step, in percent, as a JSON array: increasing,
    -- each in (0, 100].
    steps TEXT NOT NULL,
    -- The test's biases before the ramp's first step, as a JSON array: what the shares are
    -- taken from, in order, and what a roll-back gives back.
    base_biases TEXT NOT NULL,
    -- How long each step holds: a duration (`1d`), or `weekdays at 10:00 Europe/Berlin`.
    hold TEXT NOT NULL,
    -- running: the next step is applied at `due_at`; paused: until a person resumes it;
    -- finished: the last step is applied; aborted: stopped by a person.
    state TEXT NOT NULL CHECK (state IN ('running', 'paused', 'finished', 'aborted')),
    -- Why it is paused or aborted, in words.
    reason TEXT,
    -- The index of the next step to apply (the count of steps applied or folded).
    next_step INTEGER NOT NULL CHECK (next_step >= 0),
    due_at INTEGER,
    -- The last revision that changed the test and that the ramp knows of: its own last step,
    -- or the revision it started or resumed on. A later one that changes the test pauses it.
    known_revision INTEGER NOT NULL,
    created_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    CHECK ((state = 'running') = (due_at IS NOT NULL)),
    FOREIGN KEY (environment_id, tenant_id) REFERENCES environments(id, tenant_id) ON DELETE CASCADE
);

-- One active ramp per test.
CREATE UNIQUE INDEX ramps_one_active_per_test ON ramps (feature_id) WHERE state IN ('running', 'paused');
-- What the scheduler reads: the running ramps, soonest first.
CREATE INDEX ramps_due ON ramps (due_at) WHERE state = 'running';
CREATE INDEX ramps_by_environment ON ramps (environment_id);

-- Each step applied, once: the row is written in the transaction of the step's revision, and
-- its key is what makes a second instance's attempt fail rather than apply it again.
CREATE TABLE ramp_steps (
    ramp_id INTEGER NOT NULL REFERENCES ramps(id) ON DELETE CASCADE,
    step INTEGER NOT NULL CHECK (step >= 0),
    revision INTEGER NOT NULL,
    -- Who applied it: `schedule`, or the person who advanced the ramp.
    applied_by TEXT NOT NULL,
    applied_at INTEGER NOT NULL,
    -- Steps skipped after downtime and applied with this one, as a JSON array of indexes.
    folded TEXT,
    -- Recorded users who changed group.
    moved_users INTEGER NOT NULL,
    PRIMARY KEY (ramp_id, step)
);

-- What happened to a ramp besides its steps: created, paused (and why), resumed, aborted,
-- finished. The timeline reads these with the steps.
CREATE TABLE ramp_events (
    id INTEGER PRIMARY KEY,
    ramp_id INTEGER NOT NULL REFERENCES ramps(id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('created', 'paused', 'resumed', 'aborted', 'finished')),
    actor TEXT NOT NULL,
    detail TEXT,
    at INTEGER NOT NULL
);

CREATE INDEX ramp_events_by_ramp ON ramp_events (ramp_id, id);

-- Trigger URLs: an alert in another system (Crashlytics, Sentry) calls one to stop a test's ramp
-- or switch a feature off. Only the token's SHA-256 is kept, as for keys.
CREATE TABLE triggers (
    id INTEGER PRIMARY KEY,
    tenant_id INTEGER NOT NULL,
    environment_id INTEGER NOT NULL,
    feature_id INTEGER NOT NULL REFERENCES features(id) ON DELETE CASCADE,
    -- pause: the feature's active ramp pauses; rollback: it is aborted and its variation goes
    -- back to 0 %; disable: the feature is switched off, as one revision (its ramp pauses too).
    action TEXT NOT NULL CHECK (action IN ('pause', 'rollback', 'disable')),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    sha256 BLOB NOT NULL UNIQUE CHECK (length(sha256) = 32),
    -- The token's marker and first digits, to tell triggers apart in lists.
    prefix TEXT NOT NULL UNIQUE,
    created_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER,
    FOREIGN KEY (environment_id, tenant_id) REFERENCES environments(id, tenant_id) ON DELETE CASCADE
);

CREATE INDEX triggers_by_feature ON triggers (feature_id);

-- Every call of a trigger, with its caller and what it did.
CREATE TABLE trigger_calls (
    id INTEGER PRIMARY KEY,
    trigger_id INTEGER NOT NULL REFERENCES triggers(id) ON DELETE CASCADE,
    at INTEGER NOT NULL,
    -- The caller's address, and its User-Agent as sent (at most 200 characters).
    address TEXT NOT NULL,
    user_agent TEXT,
    -- Whether it acted: a call within a minute of the last one that acted does not.
    acted INTEGER NOT NULL CHECK (acted IN (0, 1)),
    -- What it did, in words.
    outcome TEXT NOT NULL
);

CREATE INDEX trigger_calls_by_trigger ON trigger_calls (trigger_id, id);
