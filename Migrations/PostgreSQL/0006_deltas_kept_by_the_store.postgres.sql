-- Flagpole schema, version 6, for PostgreSQL.
--
-- assignment_deltas (the net change of a test's users per variation and minute) is kept by the
-- statements that write assignment events, all in the store's one home of assignments, rather
-- than by a trigger for every event row: a bulk assignment of a million users updated the same
-- few delta rows a million times, where one grouped statement adds them at once. A single change
-- adds its one or two deltas itself.
-- The trigger functions 0005 made for PostgreSQL go with their triggers.
DROP TRIGGER assignment_events_count_in ON assignment_events;
DROP TRIGGER assignment_events_count_out ON assignment_events;
DROP FUNCTION assignment_events_count_in();
DROP FUNCTION assignment_events_count_out();
