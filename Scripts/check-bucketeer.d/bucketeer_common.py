"""What the check-bucketeer parts share (Python standard library only).

- Failures: `CheckFailed`, `expect`, and `Parts`, which runs the parts of a script, prints a PASS
  line per part and goes on after a failure, so one run reports every failed part.
- HTTP: a urllib client that never follows a redirect (a 3xx is an error to the SDK, §10) and
  keeps each exchange printable, keys shortened to their prefix.
- The wire contract of docs/BUCKETEER.md ("The SDK's wire contract"; §N: the SDK's client API
  sections, §6 the answer, §8 events, §9 values, §10 errors), written from its tables:
  `decode_evaluations` (§6, strict, as the SDK's `Codable` types decode), `decode_events_answer`
  (§8), `decode_error` (§10), the getters' conversions (§9), and `Install`/`App`, an app that keeps
  what the SDK keeps (one token and `evaluatedAt` per install, a cache keyed by evaluation id, read
  back `WHERE userId = ?`) and applies an answer as §7 says.
- Flagpole's side: the admin API, OFREP bulk evaluation, and `check_against_ofrep`, which holds a
  Bucketeer answer to what OFREP gives the same user.
"""

import argparse
import json
import math
import re
import sys
import time
import traceback
import urllib.error
import urllib.request
import uuid
from urllib.parse import quote

# ---------------------------------------------------------------------------------------------
# Failures


class CheckFailed(Exception):
    """An assertion failed; the message says what was expected, what came, and the exchange."""


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


def expect_equal(got, expected, what):
    if got != expected or type(got) is not type(expected):
        raise CheckFailed(f"{what}: expected {expected!r}, got {got!r}")


class Parts:
    """Runs parts in order; a failed part prints why and the next parts still run."""

    def __init__(self, script):
        self.script = script
        self.failed = []

    def run(self, name, function, *arguments):
        started = time.monotonic()
        try:
            summary = function(*arguments)
        except CheckFailed as failure:
            self.failed.append(name)
            print(f"FAIL check-bucketeer: {name}\n{failure}\n", file=sys.stderr, flush=True)
            return False
        except Exception:  # noqa: BLE001 - a crash of the check is a failure too, with its trace
            self.failed.append(name)
            print(f"FAIL check-bucketeer: {name}: the check itself failed\n{traceback.format_exc()}", file=sys.stderr, flush=True)
            return False
        elapsed = time.monotonic() - started
        print(f"PASS check-bucketeer: {name}" + (f": {summary}" if summary else "") + f" ({elapsed:.1f} s)", flush=True)
        return True

    def exit(self):
        if self.failed:
            print(f"check-bucketeer: {self.script}: {len(self.failed)} part(s) failed: {', '.join(self.failed)}", file=sys.stderr)
            sys.exit(1)


KEY_PATTERN = re.compile(r"fp_[0-9a-f]{8}[0-9a-f]{40}")


def redacted(text):
    return KEY_PATTERN.sub(lambda match: match.group(0)[:11] + "…", text)


# ---------------------------------------------------------------------------------------------
# HTTP


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *arguments, **options):
        return None  # the 3xx comes back as it is


_opener = urllib.request.build_opener(_NoRedirect)


class Exchange:
    """One request and its response, printable for a failure message."""

    def __init__(self, method, url, headers, body, status, response_headers, data):
        self.method = method
        self.url = url
        self.request_headers = headers
        self.request_body = body
        self.status = status
        self.response_headers = response_headers
        self.data = data
        self.text = data.decode("utf-8", "replace")

    def header(self, name):
        return self.response_headers.get(name)

    def __str__(self):
        sent = " ".join(f"-H '{name}: {value}'" for name, value in self.request_headers.items())
        body = ""
        if self.request_body is not None:
            shown = self.request_body[:1500].decode("utf-8", "replace")
            more = f"… ({len(self.request_body)} bytes)" if len(self.request_body) > 1500 else ""
            body = f" --data '{shown}{more}'"
        text = self.text if len(self.text) <= 3000 else self.text[:3000] + f"… ({len(self.text)} characters)"
        content_type = self.header("Content-Type")
        return redacted(
            f"  request:  {self.method} {self.url} {sent}{body}\n"
            f"  response: {self.status}" + (f" Content-Type: {content_type}" if content_type else "") + f"\n      {text}"
        )

    def fail(self, message):
        raise CheckFailed(f"{message}\n{self}")

    def expect(self, condition, message):
        if not condition:
            self.fail(message)

    def expect_status(self, *statuses):
        self.expect(self.status in statuses, f"expected status {' or '.join(map(str, statuses))}, got {self.status}")
        return self

    def json(self):
        """The body as strict JSON (duplicate keys, NaN and Infinity refused, as JSONDecoder does),
        after checking it is declared as JSON."""
        content_type = (self.header("Content-Type") or "").split(";")[0].strip().lower()
        self.expect(content_type == "application/json", f"expected Content-Type application/json, got {self.header('Content-Type')!r}")
        try:
            return strict_json(self.text)
        except ValueError as error:
            self.fail(f"the body is not strict JSON ({error})")


def _no_duplicates(pairs):
    keys = [key for key, _ in pairs]
    duplicated = sorted({key for key in keys if keys.count(key) > 1})
    if duplicated:
        raise ValueError(f"repeated keys {duplicated}")
    return dict(pairs)


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")


def strict_json(text):
    return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)


def post(origin, path, *, body=None, raw=None, headers=None, timeout=10, method="POST"):
    """`body` is sent as the SDK encodes it (§4: sorted keys, pretty printed); `raw` as it is."""
    if body is not None:
        data = json.dumps(body, sort_keys=True, indent=2, separators=(",", " : "), ensure_ascii=False).encode()
    else:
        data = raw
    sent = {"Content-Type": "application/json", "Accept": "*/*", **(headers or {})}
    url = origin.rstrip("/") + path
    request = urllib.request.Request(url, data=data, method=method, headers=sent)
    try:
        with _opener.open(request, timeout=timeout) as response:
            return Exchange(method, url, sent, data, response.status, response.headers, response.read())
    except urllib.error.HTTPError as error:
        return Exchange(method, url, sent, data, error.code, error.headers, error.read())


def get(origin, path, *, headers=None, timeout=10):
    return post(origin, path, headers=headers, timeout=timeout, method="GET")


def segment(text):
    return quote(text, safe="")


# ---------------------------------------------------------------------------------------------
# §6: the get_evaluations answer, decoded as strictly as the SDK's Codable types

REASONS = ["TARGET", "RULE", "DEFAULT", "CLIENT", "OFF_VARIATION", "PREREQUISITE"]
# What Flagpole gives of the six (the SDK's own CLIENT and PREREQUISITE never come from it).
SERVER_REASONS = ["TARGET", "RULE", "DEFAULT", "OFF_VARIATION"]
DECIMAL = re.compile(r"^-?[0-9]+$")


def _field(exchange, container, key, kind, where):
    exchange.expect(isinstance(container, dict), f"{where}: expected a JSON object, got {container!r}")
    exchange.expect(key in container, f"{where}: the required key {key!r} is missing (§6: every key is required)")
    value = container[key]
    if kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif kind is str:
        ok = isinstance(value, str)
    elif kind is bool:
        ok = isinstance(value, bool)
    else:
        ok = isinstance(value, kind)
    exchange.expect(ok, f"{where}.{key}: expected a JSON {_json_type(kind)}, got {value!r}")
    return value


def _json_type(kind):
    return {int: "integer", str: "string", bool: "boolean", list: "array", dict: "object"}[kind]


def decode_evaluations(exchange, user_id):
    """A 200 answer to get_evaluations for `user_id`, checked against §6's table and §12 MUST 3.
    Returns the decoded answer."""
    exchange.expect_status(200)
    answer = exchange.json()
    token = _field(exchange, answer, "userEvaluationsId", str, "answer")
    exchange.expect(token != "", "answer.userEvaluationsId: an empty token: every poll of the app would be a fresh install")
    inner = _field(exchange, answer, "evaluations", dict, "answer")
    _field(exchange, inner, "id", str, "evaluations")
    created = _field(exchange, inner, "createdAt", str, "evaluations")
    exchange.expect(DECIMAL.match(created) is not None, f"evaluations.createdAt: expected unix seconds as a decimal string, got {created!r}")
    exchange.expect(
        1_500_000_000 < int(created) <= time.time() + 300,
        f"evaluations.createdAt: {created} is not unix seconds near now ({int(time.time())})",
    )
    _field(exchange, inner, "forceUpdate", bool, "evaluations")
    archived = _field(exchange, inner, "archivedFeatureIds", list, "evaluations")
    for index, name in enumerate(archived):
        exchange.expect(isinstance(name, str), f"evaluations.archivedFeatureIds[{index}]: expected a string, got {name!r}")
    items = _field(exchange, inner, "evaluations", list, "evaluations")
    ids, features = set(), set()
    for index, item in enumerate(items):
        where = f"evaluations.evaluations[{index}]"
        for key in ["id", "featureId", "userId", "variationId", "variationName", "variationValue"]:
            _field(exchange, item, key, str, where)
        _field(exchange, item, "featureVersion", int, where)
        reason = _field(exchange, item, "reason", dict, where)
        kind = _field(exchange, reason, "type", str, f"{where}.reason")
        exchange.expect(kind in REASONS, f"{where}.reason.type: {kind!r} is not one of the SDK's six names {REASONS}: the whole answer fails to decode")
        if reason.get("ruleId") is not None:  # optional: absent or null is "" to the SDK
            _field(exchange, reason, "ruleId", str, f"{where}.reason")
        # §12 MUST 3: unique ids that include the user, userId the requester's.
        exchange.expect(item["userId"] == user_id, f"{where}.userId: expected the requester {user_id!r}, got {item['userId']!r} (the cache is read WHERE userId = ?)")
        exchange.expect(item["id"] not in ids, f"{where}.id: {item['id']!r} repeats an earlier evaluation's id (the cache's primary key: flags are lost)")
        exchange.expect(user_id in item["id"], f"{where}.id: {item['id']!r} does not include the user id {user_id!r}")
        exchange.expect(item["featureId"] not in features, f"{where}.featureId: {item['featureId']!r} is answered twice")
        ids.add(item["id"])
        features.add(item["featureId"])
        # Flagpole's side of the contract: id featureId:featureVersion:userId, the variant in both
        # variation fields, a reason of its four, a rule id exactly with RULE.
        exchange.expect(
            item["id"] == f"{item['featureId']}:{item['featureVersion']}:{user_id}",
            f"{where}.id: expected featureId:featureVersion:userId, got {item['id']!r}",
        )
        exchange.expect(item["variationId"] == item["variationName"] and item["variationId"] != "", f"{where}: expected variationId == variationName == the variant, got {item!r}")
        exchange.expect(kind in SERVER_REASONS, f"{where}.reason.type: Flagpole gives {SERVER_REASONS}, got {kind!r}")
        rule = reason.get("ruleId") or ""
        exchange.expect((rule != "") == (kind == "RULE"), f"{where}.reason: a ruleId exactly when the type is RULE, got {reason!r}")
    return answer


def expect_full(exchange, answer, what):
    exchange.expect(answer["evaluations"]["forceUpdate"] is True, f"{what}: expected the full set with forceUpdate true")
    exchange.expect(answer["evaluations"]["evaluations"], f"{what}: expected the full set, got no evaluations")


def expect_unchanged(exchange, answer, presented, what):
    """§7.1 / MUST 4: the presented token back, no evaluations, forceUpdate false."""
    inner = answer["evaluations"]
    exchange.expect(answer["userEvaluationsId"] == presented, f"{what}: expected the presented token {presented!r} back (nothing changed)")
    exchange.expect(inner["evaluations"] == [], f"{what}: expected no evaluations for an unchanged answer")
    exchange.expect(inner["forceUpdate"] is False, f"{what}: expected forceUpdate false for an unchanged answer")
    exchange.expect(inner["archivedFeatureIds"] == [], f"{what}: expected no archivedFeatureIds for an unchanged answer")


# ---------------------------------------------------------------------------------------------
# §8 and §10: the register_events answer and error bodies


def decode_events_answer(exchange, sent_ids):
    """200 and `{"errors": {id: {"retriable": bool, "message": string}}}`, every id one sent."""
    exchange.expect_status(200)
    answer = exchange.json()
    errors = _field(exchange, answer, "errors", dict, "answer")
    for event_id, error in errors.items():
        exchange.expect(event_id in sent_ids, f"errors: {event_id!r} is not the id of an event sent")
        _field(exchange, error, "retriable", bool, f"errors[{event_id!r}]")
        _field(exchange, error, "message", str, f"errors[{event_id!r}]")
    return errors


def decode_error(exchange, *statuses):
    """A refusal: one of `statuses`, and `{"error": {"code": status, "message": "…"}}` (§10)."""
    exchange.expect_status(*statuses)
    body = exchange.json()
    error = _field(exchange, body, "error", dict, "answer")
    code = _field(exchange, error, "code", int, "error")
    message = _field(exchange, error, "message", str, "error")
    exchange.expect(code == exchange.status, f"error.code: expected the status {exchange.status}, got {code}")
    exchange.expect(message.strip() != "", "error.message: expected a message for the app's log")
    return error


# ---------------------------------------------------------------------------------------------
# §9: the getters


class Unreadable(Exception):
    """A value the getter cannot convert: the app gets its default (or, for Int, would crash)."""


_SWIFT_DECIMAL = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$")
_SWIFT_HEX = re.compile(r"^[+-]?0[xX]([0-9a-fA-F]+(\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)([pP][+-]?[0-9]+)?$")
_SWIFT_SPECIAL = re.compile(r"^[+-]?(inf|infinity|nan)$", re.IGNORECASE)


def swift_double(text):
    """Swift's `Double(String)`: the whole text is a decimal or hex float, inf or nan; else nil."""
    if _SWIFT_DECIMAL.match(text):
        return float(text)
    if _SWIFT_HEX.match(text):
        sign = -1.0 if text.startswith("-") else 1.0
        body = text.lstrip("+-")
        return sign * float.fromhex(body if "p" in body.lower() else body + "p0")
    if _SWIFT_SPECIAL.match(text):
        return float(text.lower().lstrip("+").replace("infinity", "inf"))
    raise Unreadable(f"Double({text!r}) is nil")


def read_value(kind, text):
    """What the SDK's getter of `kind` makes of `variationValue` (§9)."""
    if kind == "bool":
        if text == "true":
            return True
        if text == "false":
            return False
        raise Unreadable(f"Bool({text!r}) is nil: only \"true\" and \"false\"")
    if kind == "int":
        number = swift_double(text)
        if not math.isfinite(number) or not -(2**63) <= number < 2**63:
            raise Unreadable(f"Int(Double({text!r})) traps: the app would crash")
        return int(number)
    if kind == "double":
        return swift_double(text)
    if kind == "string":
        return text
    if kind == "object":
        try:
            value = strict_json(text)
        except ValueError:
            raise Unreadable(f"{text!r} is not JSON: objectVariation gives .string, jsonVariation the default")
        if not isinstance(value, (dict, list)):
            raise Unreadable(f"{text!r} is JSON but not an object or array")
        return value
    raise ValueError(kind)


# ---------------------------------------------------------------------------------------------
# The app: what the SDK keeps and sends

SDK_VERSION = "2.2.1"
SOURCE_IOS = 2
METADATA = {"app_version": "1.4.0", "os_version": "17.5", "device_model": "iPhone15,2", "device_type": "mobile"}
EVENT_TYPES = {"goal": 1, "evaluation": 3, "metrics": 4}
GOAL_EVENT = "type.googleapis.com/bucketeer.event.client.GoalEvent"
EVALUATION_EVENT = "type.googleapis.com/bucketeer.event.client.EvaluationEvent"
METRICS_EVENT = "type.googleapis.com/bucketeer.event.client.MetricsEvent"

# The app's code: each flag it reads and the getter it reads it with (the demo's flags).
APP_FLAGS = {
    "Example Feature Flag": "bool",
    "Example Development Flag": "bool",
    "Example Unlock Flag": "bool",
    "Example A/B Test": "string",
    "New Onboarding": "bool",
    "Example MVT Test": "string",
    "Checkout Button Colour": "string",
    "mainViewTitle": "string",
    "numberOfItemsToDisplay": "int",
    "someFeatureEnabled": "bool",
    "discountRate": "double",
    "theme": "object",
}
TESTS = ["Example A/B Test", "New Onboarding", "Example MVT Test", "Checkout Button Colour"]
MISSING_FLAG = "flag-this-app-reads-but-the-store-lacks"


def new_event_id():
    return str(uuid.uuid4()).upper()


class Install:
    """One app install: UserDefaults (one token and evaluatedAt for the install, not per user)
    and the SQLite cache (`id` the primary key, read back by userId), §5 and §6."""

    def __init__(self):
        self.token = ""
        self.evaluated_at = "0"
        self.tag = None
        self.cache = {}  # evaluation id -> evaluation
        self.queue = []  # events not yet accepted by the server


class App:
    """The SDK initialised for one user on an install, against one apiEndpoint."""

    def __init__(self, install, origin, base, key, user, attributes, tag=""):
        self.install = install
        self.origin = origin
        self.base = base  # the apiEndpoint's path: "/t/demo/production" or "" (the bare host)
        self.key = key
        self.user = user
        self.attributes = dict(attributes)
        self.tag = tag
        self.attributes_updated = False
        if install.tag is not None and install.tag != tag:
            install.token = ""  # §5: "" after the tag changed
        install.tag = tag
        self.metrics_queued = set()

    def request_body(self):
        return {
            "sdkVersion": SDK_VERSION,
            "sourceId": SOURCE_IOS,
            "tag": self.tag,
            "user": {"data": self.attributes, "id": self.user},
            "userEvaluationCondition": {"evaluatedAt": self.install.evaluated_at, "userAttributesUpdated": self.attributes_updated},
            "userEvaluationsId": self.install.token,
        }

    def fetch(self):
        """One get_evaluations call, decoded strictly and applied as §7 says. Returns
        (exchange, answer, presented token)."""
        presented = self.install.token
        started = time.monotonic()
        exchange = post(self.origin, f"{self.base}/get_evaluations", body=self.request_body(), headers={"Authorization": self.key})
        latency = time.monotonic() - started
        answer = decode_evaluations(exchange, self.user)
        self._apply(answer, presented)
        self._queue_metrics(latency, len(exchange.data))
        return exchange, answer, presented

    def _apply(self, answer, presented):
        inner = answer["evaluations"]
        self.attributes_updated = False
        if answer["userEvaluationsId"] == presented:
            return  # §7.1: nothing stored changes
        if inner["forceUpdate"]:
            self.install.cache = {key: row for key, row in self.install.cache.items() if row["userId"] != self.user}
            for item in inner["evaluations"]:
                self.install.cache[item["id"]] = item  # INSERT OR REPLACE
        else:
            mine = {row["featureId"]: row for row in self.install.cache.values() if row["userId"] == self.user}
            for item in inner["evaluations"]:
                mine[item["featureId"]] = item
            for name in inner["archivedFeatureIds"]:
                mine.pop(name, None)
            self.install.cache = {key: row for key, row in self.install.cache.items() if row["userId"] != self.user}
            for row in mine.values():
                self.install.cache[row["id"]] = row
        self.install.token = answer["userEvaluationsId"]
        self.install.evaluated_at = inner["createdAt"]

    def stored(self):
        """The cache as the SDK reads it: `WHERE userId = ?`, by featureId."""
        rows = [row for row in self.install.cache.values() if row["userId"] == self.user]
        by_feature = {}
        for row in rows:
            expect(row["featureId"] not in by_feature, f"the cache holds two evaluations of {row['featureId']!r} for {self.user!r}")
            by_feature[row["featureId"]] = row
        return by_feature

    # Getters: each records an evaluation event, as every getter call does (§8).

    def variation(self, name, kind):
        """(value, details) as the getter gives them; a missing or unreadable flag is the app's
        default (None here) with reason CLIENT."""
        row = self.stored().get(name)
        if row is None:
            self._queue_evaluation(name, 0, "", {"type": "CLIENT", "ruleId": ""})
            return None, None
        self._queue_evaluation(name, row["featureVersion"], row["variationId"], row["reason"])
        return read_value(kind, row["variationValue"]), row

    def update_attributes(self, attributes):
        self.attributes = dict(attributes)
        self.attributes_updated = True

    def _event(self, kind, payload):
        event = {
            "id": new_event_id(),
            "type": EVENT_TYPES[kind],
            "event": {**payload, "timestamp": int(time.time()), "sourceId": SOURCE_IOS, "sdkVersion": SDK_VERSION, "metadata": dict(METADATA)},
        }
        self.install.queue.append(event)
        return event

    def _queue_evaluation(self, name, version, variation, reason):
        return self._event("evaluation", {
            "@type": EVALUATION_EVENT, "featureId": name, "featureVersion": version, "variationId": variation,
            "userId": self.user, "user": {"id": self.user, "data": dict(self.attributes)}, "reason": dict(reason), "tag": self.tag,
        })

    def track(self, goal, value=0.0):
        return self._event("goal", {
            "@type": GOAL_EVENT, "goalId": goal, "value": value, "userId": self.user,
            "user": {"id": self.user, "data": dict(self.attributes)}, "tag": self.tag,
        })

    def _queue_metrics(self, latency, size):
        # Latency and size after each fetch, one of each kind while queued (§8).
        for kind, inner in [
            (1, {"@type": "type.googleapis.com/bucketeer.event.client.LatencyMetricsEvent", "apiId": 2, "labels": {"tag": self.tag}, "latencySecond": round(latency, 6)}),
            (2, {"@type": "type.googleapis.com/bucketeer.event.client.SizeMetricsEvent", "apiId": 2, "labels": {"tag": self.tag}, "sizeByte": size}),
        ]:
            if kind not in self.metrics_queued:
                self.metrics_queued.add(kind)
                self._event("metrics", {"@type": METRICS_EVENT, "type": kind, "event": inner})

    def flush(self, events=None):
        """register_events with the queue (or `events`): the accepted and non-retriable events
        leave the queue (§8). Returns (exchange, errors, events sent)."""
        batch = list(self.install.queue if events is None else events)
        body = {"sdkVersion": SDK_VERSION, "sourceId": SOURCE_IOS, "events": batch}
        exchange = post(self.origin, f"{self.base}/register_events", body=body, headers={"Authorization": self.key})
        errors = decode_events_answer(exchange, {event["id"] for event in batch})
        # Accepted and non-retriable events leave the queue; retriable ones and those not sent stay.
        done = {event["id"] for event in batch} - {event_id for event_id, error in errors.items() if error["retriable"]}
        self.install.queue = [event for event in self.install.queue if event["id"] not in done]
        self.metrics_queued = {event["event"]["type"] for event in self.install.queue if event["type"] == 4}
        return exchange, errors, batch


def read_every_flag(app, exchange):
    """The app reads each of its flags with its getter: every evaluation the server sent must be
    one the app can read with that getter. Returns {flag: (value, row)}."""
    values = {}
    stored = app.stored()
    for name in stored:
        exchange.expect(name in APP_FLAGS, f"the answer has {name!r}, a flag the demo does not have")
    for name, kind in APP_FLAGS.items():
        try:
            value, row = app.variation(name, kind)
        except Unreadable as error:
            exchange.fail(f"{app.user}: the {kind} getter of {name!r} fails (§9): {error}")
        values[name] = (value, row)
    return values


# ---------------------------------------------------------------------------------------------
# Flagpole: the admin API, OFREP bulk evaluation


class Admin:
    def __init__(self, origin, key, tenant="demo"):
        self.origin = origin
        self.key = key
        self.tenant = tenant

    def call(self, method, path, body=None, statuses=(200,)):
        exchange = post(
            self.origin, f"/api/v1/tenants/{self.tenant}{path}", method=method,
            raw=None if body is None else json.dumps(body).encode(), headers={"Authorization": f"Bearer {self.key}"},
        )
        exchange.expect_status(*statuses)
        return exchange.json() if exchange.data else None

    def feature_path(self, env, feature):
        return f"/environments/{env}/features/{segment(feature)}"

    def results(self, env, feature):
        return self.call("GET", f"{self.feature_path(env, feature)}/results")


def ofrep_bulk(origin, env, user, attributes, tag="", key=None):
    """OFREP bulk evaluation for the same user and attributes: {key: item}."""
    path = f"/t/demo/{env}/ofrep/v1/evaluate/flags" + (f"?tag={segment(tag)}" if tag else "")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    exchange = post(origin, path, raw=json.dumps({"context": {"targetingKey": user, **attributes}}).encode(), headers=headers)
    exchange.expect_status(200)
    body = exchange.json()
    return {item["key"]: item for item in body["flags"]}, exchange


def expected_reason(item):
    """The Bucketeer reason of an OFREP item (Flagpole's mapping of its reasons)."""
    reason = item.get("reason")
    rule = (item.get("metadata") or {}).get("rule")
    if reason == "DISABLED":
        return {"type": "OFF_VARIATION", "ruleId": ""}
    if reason == "TARGETING_MATCH":
        return {"type": "RULE", "ruleId": rule} if rule else {"type": "TARGET", "ruleId": ""}
    return {"type": "DEFAULT", "ruleId": ""}


def check_against_ofrep(exchange, answer, origin, env, user, attributes, tag="", key=None):
    """Every evaluation of a full Bucketeer answer equals what OFREP bulk gives the same user:
    the same flags, the variation, the value (through the app's getter), the reason, the revision."""
    flags, ofrep = ofrep_bulk(origin, env, user, attributes, tag, key)
    items = {item["featureId"]: item for item in answer["evaluations"]["evaluations"]}
    where = f"{user} on {env}" + (f" tag {tag!r}" if tag else "")

    def fail(message):
        raise CheckFailed(f"{where}: {message}\n  Bucketeer:\n{exchange}\n  OFREP:\n{ofrep}")

    if set(items) != set(flags):
        fail(f"Bucketeer answers {sorted(items)}, OFREP {sorted(flags)}")
    for name, item in items.items():
        theirs = flags[name]
        if "errorCode" in theirs:
            fail(f"{name!r}: OFREP gives an error {theirs!r}")
        kind = APP_FLAGS[name]
        value = read_value(kind, item["variationValue"])
        other = theirs["value"]
        same = value == other and isinstance(other, bool) == isinstance(value, bool)
        if kind == "int":
            same = same and isinstance(other, int)
        if not same:
            fail(f"{name!r}: the {kind} getter reads {value!r} (from {item['variationValue']!r}), OFREP's value is {other!r}")
        if item["variationName"] != theirs.get("variant"):
            fail(f"{name!r}: variation {item['variationName']!r}, OFREP's variant {theirs.get('variant')!r}")
        if item["reason"] != expected_reason(theirs):
            fail(f"{name!r}: reason {item['reason']!r}, OFREP's {theirs.get('reason')} {theirs.get('metadata')} maps to {expected_reason(theirs)!r}")
        revision = (theirs.get("metadata") or {}).get("revision")
        if item["featureVersion"] != revision:
            fail(f"{name!r}: featureVersion {item['featureVersion']}, OFREP's revision {revision}")
    return flags


def parse_options(*extra):
    """The options Scripts/check-bucketeer passes every part: the server, the demo's admin key, a
    delivery key of demo/production and one of demo/staging; `extra` adds a script's own
    (`(args, kwargs)` pairs for `add_argument`)."""
    parser = argparse.ArgumentParser()
    for args, kwargs in extra:
        parser.add_argument(*args, **kwargs)
    parser.add_argument("--origin", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--delivery-key", required=True)
    parser.add_argument("--staging-key", required=True)
    return parser.parse_args()
