-- Flagpole schema, version 11: experiment results (docs/RESULTS.md). Goals, the events apps send
-- for them, and the figures a readout needs, kept up to date as events arrive so that a readout
-- reads a few rows per variation and never scans events.
--
-- Times are Unix milliseconds, as in the per-user tables.

-- What a test is judged on, per environment.
CREATE TABLE goals (
    id INTEGER PRIMARY KEY,
    tenant_id INTEGER NOT NULL,
    environment_id INTEGER NOT NULL,
    -- `$` starts the names Flagpole reserves (`$exposure`).
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100 AND substr(name, 1, 1) <> '$'),
    -- conversion: did the user do it at least once; count: how many times; value: a sum.
    kind TEXT NOT NULL CHECK (kind IN ('conversion', 'count', 'value')),
    better TEXT NOT NULL CHECK (better IN ('higher', 'lower')),
    created_at INTEGER NOT NULL,
    UNIQUE (environment_id, name),
    FOREIGN KEY (environment_id, tenant_id) REFERENCES environments(id, tenant_id) ON DELETE CASCADE
);

-- Raw events as received, and the memory of their ids: an id seen again is a duplicate. Rows
-- go when older than the retention (by receipt), which is never shorter than the window in
-- which events are accepted, so a retried batch still finds its ids. No foreign keys: a check
-- per row would cost more than the insert, and nothing reads a goal's events but by id.
CREATE TABLE events (
    environment_id INTEGER NOT NULL,
    event_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    -- The goal; NULL for an exposure.
    goal_id INTEGER,
    -- The test an exposure is of; NULL for a goal's event.
    feature_id INTEGER,
    value REAL,
    -- When it happened, by the client's clock.
    time INTEGER NOT NULL,
    -- When the server received it.
    received_at INTEGER NOT NULL,
    CHECK ((goal_id IS NULL) <> (feature_id IS NULL)),
    PRIMARY KEY (environment_id, event_id)
) WITHOUT ROWID;

-- A test's epochs: each revision that changes its variations, biases, rules or segments (or
-- turns it on or off) starts one. Readouts are per epoch: users who joined at 10 % and at 50 %
-- are not one sample.
CREATE TABLE experiment_epochs (
    environment_id INTEGER NOT NULL,
    feature_id INTEGER NOT NULL,
    epoch INTEGER NOT NULL CHECK (epoch >= 1),
    revision INTEGER NOT NULL,
    started_at INTEGER NOT NULL,
    -- JSON arrays: the variations, and the share (0–100) of the split each had.
    variations TEXT NOT NULL CHECK (json_valid(variations)),
    shares TEXT NOT NULL CHECK (json_valid(shares)),
    -- What starts the next epoch when it changes (ExperimentEpochs.signature).
    signature TEXT NOT NULL,
    PRIMARY KEY (feature_id, epoch)
) WITHOUT ROWID;

-- Who joined each variation in each epoch: first assigned, or moved in.
CREATE TABLE experiment_arms (
    environment_id INTEGER NOT NULL,
    feature_id INTEGER NOT NULL,
    epoch INTEGER NOT NULL,
    variation TEXT NOT NULL,
    -- Users who joined the variation in the epoch, less those excluded.
    users INTEGER NOT NULL DEFAULT 0,
    -- Of them, first assigned by the split (not by a rule, an override or a move): the users
    -- the sample-ratio check counts.
    split_users INTEGER NOT NULL DEFAULT 0,
    -- Of them, users an app reported as exposed.
    exposed_users INTEGER NOT NULL DEFAULT 0,
    -- Users seen in this and another variation in the epoch, counted nowhere else.
    excluded_users INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (feature_id, epoch, variation)
) WITHOUT ROWID;

-- Per variation and goal: events, and the sum and sum of squares of users' totals, since
-- joining (intention to treat) and since exposure. The user is the unit of randomisation.
CREATE TABLE experiment_totals (
    environment_id INTEGER NOT NULL,
    feature_id INTEGER NOT NULL,
    epoch INTEGER NOT NULL,
    variation TEXT NOT NULL,
    goal_id INTEGER NOT NULL,
    events INTEGER NOT NULL DEFAULT 0,
    sum REAL NOT NULL DEFAULT 0,
    sum_squares REAL NOT NULL DEFAULT 0,
    exposed_events INTEGER NOT NULL DEFAULT 0,
    exposed_sum REAL NOT NULL DEFAULT 0,
    exposed_sum_squares REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (feature_id, epoch, goal_id, variation)
) WITHOUT ROWID;

-- The same figures as each day (UTC) ended, users included, for the readout over time.
CREATE TABLE experiment_days (
    environment_id INTEGER NOT NULL,
    feature_id INTEGER NOT NULL,
    epoch INTEGER NOT NULL,
    goal_id INTEGER NOT NULL,
    variation TEXT NOT NULL,
    -- Unix days.
    day INTEGER NOT NULL,
    users INTEGER NOT NULL,
    sum REAL NOT NULL,
    sum_squares REAL NOT NULL,
    exposed_users INTEGER NOT NULL,
    exposed_sum REAL NOT NULL,
    exposed_sum_squares REAL NOT NULL,
    PRIMARY KEY (feature_id, epoch, goal_id, variation, day)
) WITHOUT ROWID;

-- Each user's part in the environment's tests: their stints (epoch, variation, since when,
-- exposed when) and totals per goal, in one row (ExperimentUserState's encoding), so an event
-- costs one read and one write whatever the number of tests.
CREATE TABLE experiment_users (
    environment_id INTEGER NOT NULL,
    user_id TEXT NOT NULL,
    state BLOB NOT NULL,
    PRIMARY KEY (environment_id, user_id)
) WITHOUT ROWID;

-- How far the figures have followed the environment's revisions and assignment history.
CREATE TABLE experiment_progress (
    environment_id INTEGER PRIMARY KEY,
    revision INTEGER NOT NULL,
    assignment_event_id INTEGER NOT NULL
);
