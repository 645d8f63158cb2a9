"""The results rows' helper: the test file, event batches, the sender and the shell's baseline.

  results.py features FILE TESTS                       a features.json of TESTS A/B tests (50/50)
  results.py send BASE KEY EVENTS USERS SECONDS_FILE   sends EVENTS events in batches of 1 000 from
                                                       two connections; prints events accepted
  results.py baseline-sql OUT EVENTS USERS ENV GOALS TEST_IDS STATE_BYTES
                                                       the shell's same rows: each batch's raw events,
                                                       one write of each user's row, the totals

Users are u000000 … (USERS must be a multiple of 1 000): batch b holds users of block b % (USERS/1000),
so every user gets EVENTS/USERS events; ids are b-i, so no event repeats.
"""

import http.client
import json
import random
import sys
import threading
import time
import urllib.parse

BATCH = 1000


def features(path, tests):
    doc = {"features": [
        {"name": f"results_test_{i}", "test-variations": ["A", "B"], "test-biases": [50, 50]} for i in range(tests)]}
    with open(path, "w") as f:
        json.dump(doc, f)


def templates(count, now_ms):
    """Batch bodies with @B (the batch's number) and @X (its block of users) left to fill."""
    rng = random.Random(7)
    out = []
    for _ in range(count):
        slots = list(range(BATCH))
        rng.shuffle(slots)
        events = []
        for i, slot in enumerate(slots):
            if rng.random() < 0.5:
                events.append(f'{{"id":"@B-{i}","user":"u@X{slot:03d}","goal":"purchase","time":{now_ms}}}')
            else:
                value = round(rng.expovariate(1 / 20), 2)
                events.append(f'{{"id":"@B-{i}","user":"u@X{slot:03d}","goal":"revenue","value":{value},"time":{now_ms}}}')
        out.append(('{"events":[' + ",".join(events) + "]}").encode())
    return out


def send(base, key, events, users):
    batches = events // BATCH
    blocks = users // BATCH
    bodies = templates(16, int(time.time() * 1000))
    url = urllib.parse.urlparse(base)
    counter = iter(range(batches))
    lock = threading.Lock()
    accepted = [0]
    errors = []

    def worker():
        connection = http.client.HTTPConnection(url.hostname, url.port)
        while True:
            with lock:
                batch = next(counter, None)
            if batch is None:
                return
            body = bodies[batch % len(bodies)].replace(b"@B", str(batch).encode()).replace(
                b"@X", f"{batch % blocks:03d}".encode())
            connection.request("POST", "/t/bench/production/events", body=body,
                               headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
            response = connection.getresponse()
            answer = response.read()
            if response.status != 200:
                errors.append(f"{response.status} {answer[:200]!r}")
                return
            report = json.loads(answer)
            if report["refused"]:
                errors.append(f"refused: {report['refused'][:2]}")
                return
            with lock:
                accepted[0] += report["accepted"]

    start = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    if errors:
        print("errors: " + "; ".join(errors[:3]), file=sys.stderr)
        sys.exit(1)
    print(f"{accepted[0]} {elapsed * 1000:.1f}")


def baseline_sql(out, events, users, environment, goals, tests, state_bytes):
    """The rows one batch writes, as SQL: the raw events, one write of each user's row (of the
    average size flagpole's rows have), and the variations' totals."""
    purchase, revenue = goals.split(",")
    test_ids = tests.split(",")
    rng = random.Random(7)
    blocks = users // BATCH
    state = "x'" + "00" * state_bytes + "'"
    now_ms = int(time.time() * 1000)
    with open(out, "w") as f:
        for batch in range(events // BATCH):
            f.write("BEGIN;\n")
            rows = []
            for i in range(BATCH):
                user = f"u{batch % blocks:03d}{i:03d}"
                goal, value = (purchase, "NULL") if rng.random() < 0.5 else (revenue, f"{rng.expovariate(1 / 20):.2f}")
                rows.append(f"({environment},'b{batch}-{i}','{user}',{goal},NULL,{value},{now_ms},{now_ms})")
            f.write("INSERT INTO events (environment_id, event_id, user_id, goal_id, feature_id, value, time, received_at) VALUES "
                    + ",".join(rows) + " ON CONFLICT DO NOTHING;\n")
            for i in range(BATCH):
                f.write(f"INSERT INTO experiment_users (environment_id, user_id, state) VALUES ({environment},'u{batch % blocks:03d}{i:03d}',{state}) "
                        "ON CONFLICT (environment_id, user_id) DO UPDATE SET state = excluded.state;\n")
            for test in test_ids:
                for variation in ["A", "B"]:
                    for goal in [purchase, revenue]:
                        f.write("INSERT INTO experiment_totals (environment_id, feature_id, epoch, variation, goal_id, events, sum, sum_squares) "
                                f"VALUES ({environment},{test},1,'{variation}',{goal},1,1,1) ON CONFLICT (feature_id, epoch, goal_id, variation) "
                                "DO UPDATE SET events = events + 1, sum = sum + 1, sum_squares = sum_squares + 1;\n")
            f.write("COMMIT;\n")


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "features":
        features(sys.argv[2], int(sys.argv[3]))
    elif command == "send":
        send(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    elif command == "baseline-sql":
        baseline_sql(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7],
                     int(sys.argv[8]))
    else:
        sys.exit(f"unknown command {command}")
