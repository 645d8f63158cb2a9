-- Flagpole schema, version 18, for PostgreSQL (types as in 0001): the control each test's
-- results compare with, and the browser each member session signed in with.

-- The control a test's readout compares with unless the reader picks another: set on the results
-- page or with `flagpole results NAME --set-control V` (docs/RESULTS.md, "The control"). Without a
-- row: `Disabled` in an on/off test, else the first variation. Not part of any revision: it moves
-- no user and no client reads it.
CREATE TABLE test_controls (
    feature_id bigint PRIMARY KEY REFERENCES features(id) ON DELETE CASCADE,
    variation text COLLATE "C" NOT NULL CHECK (char_length(variation) > 0),
    set_by text COLLATE "C" NOT NULL,
    -- Milliseconds since 1970.
    set_at bigint NOT NULL
);

-- What the browser of a session called itself (its User-Agent, at most 256 characters), shown on
-- `/account` beside the address as "Firefox on macOS"; NULL for sessions older than this column.
ALTER TABLE member_sessions ADD COLUMN browser text COLLATE "C" CHECK (char_length(browser) <= 256);
