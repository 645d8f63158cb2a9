"""What the check-ofrep parts share: failures, an HTTP client that can describe what it sent and
what came back, and the demo's expected answers.

The expected answers are the server contract for `serve --demo` (README.md in this folder): each
feature and config of the demo is a flag, and a user's A/B variation must be the group their
pinned `features.json?user=ID` gives them, computed here the way the FeatureFlags client reads
that file (docs/FORMAT.md §4 and §5).
"""

import json
import re
import sys
from urllib.parse import quote

import requests

# ---------------------------------------------------------------------------------------------
# Failures


class CheckFailed(Exception):
    """An assertion of the check failed; the message says what was expected and what came."""


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


def expect_equal(got, expected, what):
    if got != expected or type(got) is not type(expected):
        raise CheckFailed(f"{what}: expected {expected!r} ({type(expected).__name__}), got {got!r} ({type(got).__name__})")


def run(part, main):
    """Runs one part; a failed check prints what went wrong and exits 1."""
    try:
        main()
    except CheckFailed as failure:
        print(f"\ncheck-ofrep: {part}: FAILED\n{failure}", file=sys.stderr)
        sys.exit(1)


KEY_PATTERN = re.compile(r"fp_[0-9a-f]{8}[0-9a-f]{40}")


def redacted(text):
    """Keys never appear whole in a log: `fp_` and their first 8 digits only."""
    return KEY_PATTERN.sub(lambda match: match.group(0)[:11] + "…", text)


# ---------------------------------------------------------------------------------------------
# HTTP


class Exchange:
    """One request and its response, printable for a failure message."""

    def __init__(self, method, url, headers, body, response):
        self.method = method
        self.url = url
        self.request_headers = headers
        self.request_body = body
        self.response = response

    @property
    def status(self):
        return self.response.status_code

    @property
    def text(self):
        return self.response.text

    def header(self, name):
        return self.response.headers.get(name)

    def __str__(self):
        sent = " ".join(f"-H '{name}: {value}'" for name, value in self.request_headers.items())
        body = self.request_body.decode("utf-8", "replace") if isinstance(self.request_body, bytes) else self.request_body
        request = f"{self.method} {self.url} {sent}" + (f" --data '{body}'" if body is not None else "")
        shown = ["Content-Type", "ETag", "Allow", "Retry-After", "WWW-Authenticate", "Content-Length"]
        headers = "".join(f"\n      {name}: {self.header(name)}" for name in shown if self.header(name) is not None)
        text = self.text if len(self.text) <= 3000 else self.text[:3000] + f"… ({len(self.text)} characters)"
        return redacted(f"  request:  {request}\n  response: {self.status}{headers}\n      {text}")

    def fail(self, message):
        raise CheckFailed(f"{message}\n{self}")

    def expect(self, condition, message):
        if not condition:
            self.fail(message)

    def expect_status(self, status):
        self.expect(self.status == status, f"expected status {status}, got {self.status}")
        return self

    def json(self):
        """The body as JSON, after checking it is declared and parses as JSON."""
        content_type = self.header("Content-Type") or ""
        self.expect(
            content_type.split(";")[0].strip() == "application/json",
            f"expected Content-Type application/json, got {content_type!r}",
        )
        try:
            return json.loads(self.text)
        except ValueError as error:
            self.fail(f"the body is not JSON ({error})")


class Client:
    """Requests to one origin (`http://host:port`), with headers sent on every request."""

    def __init__(self, origin, headers=None):
        self.origin = origin.rstrip("/")
        self.headers = dict(headers or {})
        self.session = requests.Session()

    def request(self, method, path, *, body=None, raw=None, headers=None, timeout=10):
        """`body` is sent as JSON; `raw` (bytes) as it is, declared as JSON."""
        sent = {**self.headers, **(headers or {})}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
        elif raw is not None:
            data = raw
        if data is not None:
            sent.setdefault("Content-Type", "application/json")
        url = self.origin + path
        response = self.session.request(method, url, data=data, headers=sent, timeout=timeout)
        return Exchange(method, url, sent, data, response)

    def post(self, path, body=None, **options):
        return self.request("POST", path, body=body, **options)

    def get(self, path, **options):
        return self.request("GET", path, **options)


def encoded(name):
    """A flag key or user id as one path segment or query value: every reserved byte escaped."""
    return quote(name, safe="")


# ---------------------------------------------------------------------------------------------
# The demo's flags

TENANT = "demo"
PUBLIC_ENV = "production"
PRIVATE_ENV = "staging"

# Demo features by name, with the kind `metadata.kind` names (FeatureKind's raw values).
FEATURE_KINDS = {
    "Example Feature Flag": "flag",
    "Example Development Flag": "development-flag",
    "Example Unlock Flag": "unlock-flag",
    "Example A/B Test": "ab-test",
    "New Onboarding": "on-off-ab-test",
    "Example MVT Test": "mvt-test",
    "Checkout Button Colour": "mvt-test",
}
FEATURE_TYPES = {
    "Example Feature Flag": "boolean",
    "Example Development Flag": "boolean",
    "Example Unlock Flag": "boolean",
    "Example A/B Test": "string",
    "New Onboarding": "boolean",
    "Example MVT Test": "string",
    "Checkout Button Colour": "string",
}
TESTS = [name for name, kind in FEATURE_KINDS.items() if kind.endswith("test")]

# Demo configs: (type, static value or None when the config follows a feature).
CONFIGS = {
    "mainViewTitle": ("string", None),
    "numberOfItemsToDisplay": ("integer", 15),
    "someFeatureEnabled": ("boolean", True),
    "discountRate": ("float", 2.0),
    "theme": ("object", {"accent": "blue", "cornerRadius": 8}),
}
# mainViewTitle follows "Example A/B Test": its value for each of the test's variations.
MAIN_VIEW_TITLES = {"Group A": "Welcome", "Group B": "Hello"}

ALL_FLAGS = list(FEATURE_KINDS) + list(CONFIGS)
TYPES = ["boolean", "string", "integer", "float", "object"]
UNCHECKED = object()  # an expectation a part of the contract leaves open


def env_base(env):
    return f"/t/{TENANT}/{env}"


def fetch_pinned(client, env, user):
    """The user's pinned features.json (by feature name) and configs.json, and the revision."""
    features = client.get(f"{env_base(env)}/features.json?user={encoded(user)}").expect_status(200)
    configs = client.get(f"{env_base(env)}/configs.json?user={encoded(user)}").expect_status(200)
    document = features.json()
    entries = document["features"] if isinstance(document, dict) else document
    revision = int(features.header("Flagpole-Revision"))
    return {entry["name"]: entry for entry in entries}, configs.json(), revision


def _normalized(name):
    return {"enabled": "Enabled", "on": "Enabled", "disabled": "Disabled", "off": "Disabled"}.get(name, name)


def _clamped(value):
    return min(max(value, 0.0), 100.0)


def client_group(entry):
    """The variation a device shows for a test entry of a pinned document, and its index: the
    variation whose cumulative bias range holds `test-variation-assignment`, with the biases the
    client keeps (an equal split unless one per variation and their clamped running sum is
    exactly 100 in doubles: FORMAT.md §4), the last range taking everything from its start."""
    written = entry.get("test-variations") or []
    if not written:
        variations = ["Enabled", "Disabled"]
    elif len(written) == 1:
        variations = [_normalized(written[0]), "!" + written[0]]
    else:
        variations = [_normalized(name) for name in written]
    biases = entry.get("test-biases")
    running = 0.0
    for bias in biases or []:
        running = _clamped(running + _clamped(float(bias)))
    if biases is not None and len(biases) == len(variations) and running == 100.0:
        biases = [_clamped(float(bias)) for bias in biases]
    else:
        biases = [100.0 / len(variations)] * len(variations)
    point = entry["test-variation-assignment"]
    lower = 0.0
    for index, bias in enumerate(biases[:-1]):
        upper = lower + bias
        if point < min(upper, 100.0):
            return variations[index], index
        lower = upper
    return variations[-1], len(variations) - 1


class Expected:
    """The answer the contract gives for one flag and one context."""

    def __init__(self, value, variant, reason, flag_type, kind=UNCHECKED, label=UNCHECKED):
        self.value = value
        self.variant = variant
        self.reason = reason
        self.type = flag_type
        self.kind = kind  # UNCHECKED: any non-empty string
        self.label = label  # None: no label; UNCHECKED: not checked

    def __repr__(self):
        return f"value {self.value!r}, variant {self.variant!r}, reason {self.reason}"


def expected_answer(name, pinned, context):
    """What evaluating `name` must give for `context` (a dict), given the user's pinned features
    (`pinned`, by name; the shared document's when there is no user)."""
    if name in CONFIGS:
        flag_type, value = CONFIGS[name]
        if value is not None:
            return Expected(value, "default", "STATIC", flag_type)
        group, _ = client_group(pinned["Example A/B Test"])
        return Expected(MAIN_VIEW_TITLES[group], group, "SPLIT", flag_type)
    kind = FEATURE_KINDS[name]
    entry = pinned[name]
    if kind == "flag":
        enabled = entry.get("enabled", False) is True
        return Expected(enabled, "Enabled" if enabled else "Disabled", "STATIC" if enabled else "DISABLED", "boolean", kind, None)
    if kind == "development-flag":
        if context.get("development") is True:
            return Expected(True, "Enabled", "STATIC", "boolean", kind, None)
        return Expected(False, "Disabled", "DISABLED", "boolean", kind, None)
    if kind == "unlock-flag":
        if entry.get("unlocked") is True:
            return Expected(True, "Unlocked", "TARGETING_MATCH", "boolean", kind, None)
        return Expected(False, "Locked", "STATIC", "boolean", kind, None)
    group, index = client_group(entry)
    labels = entry.get("labels") or []
    label = labels[index] if index < len(labels) else None
    value = group == "Enabled" if kind == "on-off-ab-test" else group
    return Expected(value, group, "SPLIT", FEATURE_TYPES[name], kind, label)


def check_metadata(metadata, expected, revision, where):
    """`metadata` of a success: the revision, the kind, and the label only when there is one."""
    expect(isinstance(metadata, dict), f"{where}: expected a metadata object, got {metadata!r}")
    expect_equal(metadata.get("revision"), revision, f"{where}: metadata.revision")
    if expected.kind is UNCHECKED:
        expect(isinstance(metadata.get("kind"), str) and metadata["kind"], f"{where}: expected a metadata.kind string, got {metadata!r}")
    else:
        expect_equal(metadata.get("kind"), expected.kind, f"{where}: metadata.kind")
    if expected.label is None:
        expect("label" not in metadata, f"{where}: expected no metadata.label (the variation has none), got {metadata!r}")
    elif expected.label is not UNCHECKED:
        expect_equal(metadata.get("label"), expected.label, f"{where}: metadata.label")
    for key, value in metadata.items():
        expect(
            isinstance(value, (bool, str, int, float)),
            f"{where}: metadata.{key} must be a boolean, string or number (OFREP), got {value!r}",
        )


def check_value_type(value, flag_type, where):
    python_types = {"boolean": bool, "string": str, "integer": int, "float": float, "object": dict}
    ok = isinstance(value, python_types[flag_type]) and (flag_type in ("boolean",) or not isinstance(value, bool))
    expect(ok, f"{where}: expected a {flag_type} value, got {value!r} ({type(value).__name__})")
