-- assignment_deltas (the net change of a test's users per variation and minute) is kept by the
-- statements that write assignment events, all in the store's one home of assignments
-- (AssignmentTable.swift), rather than by a trigger for every event row: a bulk assignment of a
-- million users updated the same few delta rows a million times, one B-tree search each, where
-- one grouped statement adds them at once. A single change adds its one or two deltas itself.
DROP TRIGGER assignment_events_count_in;
DROP TRIGGER assignment_events_count_out;
