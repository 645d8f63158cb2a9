"""register_events as the SDK sends them, and their effect on the tests' readouts.

    python3 events.py --origin URL --key ADMIN --delivery-key PROD --staging-key STAGING

The app reads its flags (an evaluation event per getter call), tracks the demo's goal `signup`
and flushes with its metrics events; the readouts (admin API, summed over epochs) count one
exposure per test and one goal event; the same batch sent again, as the SDK does after a failed
flush, counts nothing more; a new goal event counts. Evaluation events of the app's own default
(reason CLIENT) are not exposures. Per-event errors: an unknown event type is not retriable,
events over a request's 1000 are, metrics are never errors; old envelopes are accepted.
"""

import time

from bucketeer_common import (
    parse_options,
    APP_FLAGS,
    METRICS_EVENT,
    MISSING_FLAG,
    TESTS,
    Admin,
    App,
    Install,
    Parts,
    decode_events_answer,
    expect,
    new_event_id,
    post,
    read_every_flag,
)

PRODUCTION = "/t/demo/production"
GOAL = "signup"  # the demo's goal: a conversion goal


def next_second():
    time.sleep(1.02 - time.time() % 1)


class Run:
    def __init__(self, options):
        self.options = options
        self.origin = options.origin
        self.admin = Admin(options.origin, options.key)

    def app(self, user, attributes, base=PRODUCTION):
        return App(Install(), self.origin, base, self.options.delivery_key, user, attributes)

    def readouts(self):
        """{test: {variation: {"exposed": n, "events": n, "converted": n}}} summed over epochs, and
        each test's conversion means (the SDK's goal value must not count for a conversion goal)."""
        figures, means = {}, []
        for test in TESTS:
            readout = self.admin.results("production", test)
            per = figures.setdefault(test, {})
            for epoch in readout["epochs"]:
                for variation in epoch["variations"]:
                    entry = per.setdefault(variation["variation"], {"exposed": 0, "events": 0, "converted": 0})
                    entry["exposed"] += variation["exposedUsers"]
                for goal in epoch["goals"]:
                    if goal["goal"]["name"] != GOAL:
                        continue
                    for variation in goal["variations"]:
                        entry = per.setdefault(variation["variation"], {"exposed": 0, "events": 0, "converted": 0})
                        entry["events"] += variation["events"]
                        entry["converted"] += variation["users"]
                        means.append((test, variation["variation"], variation["mean"]))
        return figures, means

    def expect_counts(self, before, variations, exposed, events, what):
        """`before` plus `exposed` exposures and `events` goal events in each test's `variations`."""
        after, means = self.readouts()
        for test in TESTS:
            for variation, figures in after[test].items():
                was = before[test].get(variation, {"exposed": 0, "events": 0, "converted": 0})
                mine = variations.get(test) == variation
                expected = {
                    "exposed": was["exposed"] + (exposed if mine else 0),
                    "events": was["events"] + (events if mine else 0),
                }
                got = {"exposed": figures["exposed"], "events": figures["events"]}
                expect(got == expected, f"{what}: {test!r} {variation!r}: expected {expected}, the readout has {got} (before: {was})")
        for test, variation, mean in means:
            expect(0 <= mean <= 1, f"{what}: {test!r} {variation!r}: the conversion goal's mean is {mean}: the SDK's value (9.99) was counted")
        return after

    def flush_accepted(self, app, what, events=None):
        exchange, errors, batch = app.flush(events)
        exchange.expect(errors == {}, f"{what}: expected every event accepted ({{\"errors\": {{}}}})")
        return batch

    # ------------------------------------------------------------------------------------------

    def goal_and_evaluation_events(self):
        app = self.app("bk-dave", {"plan": "free"})
        # The first fetch early in a second, the goal in that same second: the SDK's timestamps
        # are whole seconds and the user joined the tests at the fetch, so the goal's second must
        # be read as covering the join (not as its first millisecond, before it).
        while time.time() % 1 > 0.4:
            time.sleep(0.05)
        exchange, answer, _ = app.fetch()
        fetched = time.time()
        read_every_flag(app, exchange)  # an evaluation event per flag
        app.variation(MISSING_FLAG, "bool")  # and one of the app's default (CLIENT)
        goal = app.track(GOAL, 9.99)
        same_second = goal["event"]["timestamp"] == int(fetched)
        variations = {test: app.stored()[test]["variationName"] for test in TESTS}
        kinds = sorted({event["type"] for event in app.install.queue})
        expect(kinds == [1, 3, 4], f"the app's queue should hold goal, evaluation and metrics events, has types {kinds}")
        before, _ = self.readouts()
        batch = first = self.flush_accepted(app, "the first flush")
        expect(app.install.queue == [], "accepted events must leave the queue")
        after = self.expect_counts(
            before, variations, 1, 1,
            "after the first flush" + (" (its goal event in the second of the user's first fetch)" if same_second else ""),
        )
        # The SDK resends a whole batch after a failed request: nothing may count twice.
        self.flush_accepted(app, "the same batch again", batch)
        self.expect_counts(after, variations, 0, 0, "after sending the same batch again")
        # A new goal event, a second later, counts: the check above is not vacuous.
        next_second()
        app.track(GOAL, 0.0)
        self.flush_accepted(app, "a second goal event")
        after = self.expect_counts(after, variations, 0, 1, "after a second goal event (a new id)")
        # At the host root, with the delivery key scoped to demo/production.
        root = App(app.install, self.origin, "", self.options.delivery_key, app.user, app.attributes)
        root.track(GOAL)
        batch = self.flush_accepted(root, "a goal event at the host root")
        after = self.expect_counts(after, variations, 0, 1, "after a goal event at the host root")
        self.flush_accepted(root, "that batch again at /t/demo/production", batch)
        self.expect_counts(after, variations, 0, 0, "after that batch again, at the other endpoint")
        return (
            f"{len(first)} events (goal, evaluation, CLIENT, metrics): one exposure per test and one goal event each "
            f"({'the goal in the second of the first fetch' if same_second else 'the goal a second after the first fetch'}), none twice"
        )

    def client_defaults(self):
        app = self.app("bk-erin", {})
        # Getters called before initialize completes: every flag is the app's default (CLIENT).
        for name, kind in APP_FLAGS.items():
            value, row = app.variation(name, kind)
            expect(row is None, "an empty cache")
        client = [event for event in app.install.queue if event["type"] == 3]
        expect(all(event["event"]["reason"]["type"] == "CLIENT" and event["event"]["variationId"] == "" for event in client), "CLIENT events")
        app.fetch()
        before, _ = self.readouts()
        self.flush_accepted(app, "evaluation events with reason CLIENT")
        self.expect_counts(before, {}, 0, 0, "after CLIENT evaluation events (no exposure)")
        return f"{len(client)} CLIENT evaluation events accepted, no exposure"

    def event_errors(self):
        app = self.app("bk-heidi", {})
        app.fetch()
        now = int(time.time())

        def metric():
            return {
                "id": new_event_id(), "type": 4,
                "event": {
                    "@type": METRICS_EVENT, "timestamp": now, "type": 1, "sourceId": 2, "sdkVersion": "2.2.1", "metadata": None,
                    "event": {"@type": "type.googleapis.com/bucketeer.event.client.LatencyMetricsEvent", "apiId": 3, "labels": {"tag": ""}, "latencySecond": 0.01},
                },
            }

        # An event type Flagpole does not take, among good ones.
        unknown = {"id": new_event_id(), "type": 2, "event": {"@type": "type.googleapis.com/bucketeer.event.client.Unknown", "timestamp": now}}
        goal = app.track(GOAL)
        app.install.queue = [metric(), unknown, goal]
        exchange, errors, _ = app.flush()
        exchange.expect(set(errors) == {unknown["id"]}, f"expected an error for the unknown type's event {unknown['id']} only")
        exchange.expect(errors[unknown["id"]]["retriable"] is False, "an unknown event type can never succeed: retriable must be false")
        expect(app.install.queue == [], "the accepted events and the unknown one leave the queue")
        # Over the 1000 events one request takes: the rest retriable.
        batch = [metric() for _ in range(999)] + [app.track(GOAL)] + [metric() for _ in range(3)]
        app.install.queue = list(batch)
        exchange, errors, _ = app.flush()
        over = {event["id"] for event in batch[1000:]}
        exchange.expect(set(errors) == over, f"expected errors exactly for the {len(over)} events after the 1000th, got {len(errors)}")
        exchange.expect(all(error["retriable"] is True for error in errors.values()), "events over the limit must be retriable")
        expect(len(app.install.queue) == len(over), "the retriable events stay in the queue")
        self.flush_accepted(app, "the retriable events at the next flush")
        # Envelopes of older SDKs: no top-level sourceId (before 2.1.5), no sdkVersion; metadata null.
        for envelope in [{}, {"sdkVersion": "2.1.4"}]:
            event = app.track(GOAL)
            event["event"]["metadata"] = None
            body = {**envelope, "events": [event]}
            exchange = post(self.origin, f"{PRODUCTION}/register_events", body=body, headers={"Authorization": app.key})
            errors = decode_events_answer(exchange, {event["id"]})
            exchange.expect(errors == {}, "an envelope without sourceId must be accepted")
        return "unknown type: retriable false; 1003 events: the last 3 retriable; metrics never errors; old envelopes accepted"


def main():
    options = parse_options()
    run = Run(options)
    parts = Parts("events.py")
    parts.run("goal and evaluation events, sent twice", run.goal_and_evaluation_events)
    parts.run("evaluation events of the app's default (CLIENT)", run.client_defaults)
    parts.run("per-event errors and envelopes", run.event_errors)
    parts.exit()


if __name__ == "__main__":
    main()
