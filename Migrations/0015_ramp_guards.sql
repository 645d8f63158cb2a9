-- Flagpole schema, version 15: a ramp's guards, judged from the readout of each step's epoch
-- while the step holds, and what they decided (docs/RAMPS.md, "Guards").

-- Each epoch's totals of the users the split placed in it (first assigned, not moved in by a
-- bias change): they arrived alike in every variation, so their comparison is fair, where users
-- a step moved have been in the app longer. What a ramp's goal guards compare.
ALTER TABLE experiment_totals ADD COLUMN split_events INTEGER NOT NULL DEFAULT 0;
ALTER TABLE experiment_totals ADD COLUMN split_sum REAL NOT NULL DEFAULT 0;
ALTER TABLE experiment_totals ADD COLUMN split_sum_squares REAL NOT NULL DEFAULT 0;

-- The guards as written (`crashes:+0.2pt`, `sample-ratio`, `traffic`, `min-users:100`), as a
-- JSON array of strings; `[]`: a ramp without guards, whose overdue steps fold after downtime.
ALTER TABLE ramps ADD COLUMN guards TEXT NOT NULL DEFAULT '[]';
-- What a failed goal guard does: pause the ramp, or abort it and give the share back (0 %).
-- A failed sample-ratio or traffic guard always pauses.
ALTER TABLE ramps ADD COLUMN on_failure TEXT NOT NULL DEFAULT 'pause' CHECK (on_failure IN ('pause', 'rollback'));
-- When the guards last looked at the holding step: the sweep looks every few minutes.
ALTER TABLE ramps ADD COLUMN looked_at INTEGER;

-- Each guard's latest look at each step's hold, with the figures it was made on. A failed look
-- is the last one of its step; the ramp's event says what it did.
CREATE TABLE ramp_looks (
    ramp_id INTEGER NOT NULL REFERENCES ramps(id) ON DELETE CASCADE,
    -- The step whose hold was judged, and the guard, by its index among the ramp's guards.
    step INTEGER NOT NULL CHECK (step >= 0),
    guard INTEGER NOT NULL CHECK (guard >= 0),
    verdict TEXT NOT NULL CHECK (verdict IN ('pass', 'wait', 'fail')),
    -- The figures as a JSON object (users, events, difference, interval, threshold, alpha, p-value).
    figures TEXT NOT NULL,
    reason TEXT NOT NULL,
    -- How many times the guard has looked at the step.
    looks INTEGER NOT NULL CHECK (looks >= 1),
    at INTEGER NOT NULL,
    PRIMARY KEY (ramp_id, step, guard)
);
