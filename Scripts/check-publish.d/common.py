"""What the check-publish scenarios share: failures, running the flagpole binary, the databases
they publish, reading a bucket back, and the invariants every publish must keep.

    fp = Flagpole(binary, db, environment)          # the real CLI on one database file
    run = fp.publish("s3://flagpole/cdn", endpoint, "--retries", "2")   # run.code, .out, .err, .report
    bucket = Bucket(s3_client, "flagpole", "cdn")
    bucket.check_consistent("after the first publish")   # the manifest names only objects that hold its bytes
    check_never_ahead(before, proxy.sent, bucket)        # …and never did, request by request

The invariant, from the publisher's contract (`flagpole publish run --help`): a reader who takes
the manifest at any moment finds every object it names, holding the bytes (SHA-256 and size) it
names. Checked on the bucket after a run, and on the requests the FaultProxy saw during it:
replaying them in order, each manifest PUT may name only objects already holding its bytes, and
no PUT may change the bytes of an object the manifest in the bucket names.
"""

import base64
import hashlib
import json
import os
import subprocess
import tempfile
import time

SUBPROCESS_TIMEOUT = 120


class CheckFailed(Exception):
    """An assertion failed; the message says what was expected and what came."""


class FlagpoleBug(CheckFailed):
    """An assertion that failed on what looks like a bug in flagpole itself (see README.md)."""


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


def expect_equal(got, expected, what):
    if got != expected:
        raise CheckFailed(f"{what}:\n  expected {expected!r}\n  got      {got!r}")


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def wait_until(condition, deadline_seconds, what, interval=0.1):
    """Polls condition() (a truthy result ends the wait and is returned) until the deadline;
    then fails, saying what was awaited and what condition() last answered or raised."""
    deadline = time.monotonic() + deadline_seconds
    last = None
    while True:
        try:
            result = condition()
            if result:
                return result
            last = result
        except Exception as error:  # noqa: BLE001 - reported if the deadline passes
            last = f"{type(error).__name__}: {error}"
        if time.monotonic() >= deadline:
            raise CheckFailed(f"waited {deadline_seconds} s for {what}; last seen: {last!r}")
        time.sleep(interval)


# ---------------------------------------------------------------------------------------------
# The binary


class Run:
    def __init__(self, arguments, completed):
        self.arguments = arguments
        self.code = completed.returncode
        self.out = completed.stdout
        self.err = completed.stderr
        self.report = None
        if "--json" in arguments and self.out.strip():
            try:
                self.report = json.loads(self.out)
            except ValueError:
                pass

    def describe(self):
        return (f"`flagpole {' '.join(self.arguments)}` exited {self.code}\n"
                f"--- stdout\n{self.out}--- stderr\n{self.err}---")


def clean_environment(home):
    """The process environment without any AWS_* or FLAGPOLE_* setting of the machine, with a
    HOME of our own: no ~/.aws of the user's can answer for a test."""
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("AWS_", "FLAGPOLE_")) and name.lower() not in ("http_proxy", "https_proxy", "all_proxy")}
    os.makedirs(os.path.join(home, ".aws"), exist_ok=True)
    environment["HOME"] = home
    environment["AWS_CONFIG_FILE"] = os.path.join(home, ".aws", "config")
    environment["AWS_SHARED_CREDENTIALS_FILE"] = os.path.join(home, ".aws", "credentials")
    environment["AWS_REGION"] = "us-east-1"
    return environment


class Flagpole:
    def __init__(self, binary, db, environment):
        self.binary = binary
        self.db = db
        self.environment = dict(environment)

    def run(self, *arguments, environment=None, ok=True, db=True):
        arguments = [str(argument) for argument in arguments] + (["--db", self.db] if db else [])
        completed = subprocess.run([self.binary, *arguments], env=environment or self.environment,
                                   capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT)
        run = Run(arguments, completed)
        if ok and run.code != 0:
            raise CheckFailed(f"expected exit 0: {run.describe()}")
        return run

    def publish(self, to, endpoint, *arguments, environment=None, json_report=True):
        extra = ["--json"] if json_report else []
        return self.run("publish", "--to", to, "--endpoint", endpoint, *arguments, *extra,
                        environment=environment, ok=False)

    def status(self, to=None):
        run = self.run("publish", "status", "--json", *(["--to", to] if to else []))
        return json.loads(run.out)

    def export(self, tenant, environment, revision=None):
        arguments = ["export", "--tenant", tenant, "--env", environment]
        if revision is not None:
            arguments += ["--revision", revision]
        completed = subprocess.run([self.binary, *map(str, arguments), "--db", self.db], env=self.environment,
                                   capture_output=True, timeout=SUBPROCESS_TIMEOUT)
        expect(completed.returncode == 0, f"flagpole {' '.join(map(str, arguments))} failed: {completed.stderr!r}")
        return completed.stdout

    def cdn_tree(self):
        """`flagpole export --all --dir`: {relative path: bytes}, manifest.json included."""
        with tempfile.TemporaryDirectory() as directory:
            tree = os.path.join(directory, "cdn")
            self.run("export", "--all", "--dir", tree)
            files = {}
            for root, _, names in os.walk(tree):
                for name in names:
                    path = os.path.join(root, name)
                    with open(path, "rb") as handle:
                        files[os.path.relpath(path, tree)] = handle.read()
            return files

    def environments(self):
        """{(tenant, env): {"revision", "private", "cacheControl"}} of every environment with a revision."""
        found = {}
        for tenant in json.loads(self.run("tenant", "list", "--json").out):
            for entry in json.loads(self.run("env", "list", "--tenant", tenant["slug"], "--json").out):
                if entry["revision"]:
                    found[(tenant["slug"], entry["name"])] = entry
        return found

    def revision(self, tenant, environment):
        return self.environments()[(tenant, environment)]["revision"]

    def new_revision(self, tenant, environment="production"):
        """A new revision of the environment (a bias change of New Onboarding); returns its number."""
        before = self.revision(tenant, environment)
        Flagpole._bias_step += 1
        enabled = 10 + Flagpole._bias_step % 80
        self.run("bias", "set", "New Onboarding", enabled, 100 - enabled, "--tenant", tenant, "--env", environment)
        after = self.revision(tenant, environment)
        expect(after == before + 1, f"bias set on {tenant}/{environment} made revision {after}, expected {before + 1}")
        return after

    _bias_step = 0

    def sql(self, statement):
        completed = subprocess.run(["sqlite3", self.db, statement], capture_output=True, text=True,
                                   timeout=SUBPROCESS_TIMEOUT)
        expect(completed.returncode == 0, f"sqlite3 {statement!r} failed: {completed.stderr}")


def make_database(binary, path, environment):
    """The database the scenarios publish: tenant demo (`flagpole demo`: production, public) with
    a private staging (production's document imported), and a second tenant acme whose production
    holds other biases (so its bytes differ from demo's)."""
    fp = Flagpole(binary, path, environment)
    fp.run("demo")
    fp.run("env", "create", "staging", "--tenant", "demo")
    with tempfile.NamedTemporaryFile(suffix=".json") as document:
        document.write(fp.export("demo", "production"))
        document.flush()
        fp.run("import", document.name, "--tenant", "demo", "--env", "staging")
        fp.run("tenant", "create", "acme")
        fp.run("import", document.name, "--tenant", "acme", "--env", "production")
    fp.new_revision("acme")
    fp.sql("UPDATE environments SET is_private = 1, delivery_version = delivery_version + 1 WHERE name = 'staging'")
    environments = fp.environments()
    expect(environments[("demo", "staging")]["private"] is True, f"demo/staging is not private: {environments}")
    expect(fp.export("demo", "production") != fp.export("acme", "production"),
           "demo/production and acme/production export the same bytes; the scenarios need them to differ")
    return fp


# ---------------------------------------------------------------------------------------------
# Objects and the bucket

STANDARD_CACHE = "public, max-age=30, stale-while-revalidate=3600, stale-if-error=86400"
PRIVATE_CACHE = "private, max-age=30"
IMMUTABLE_CACHE = "public, max-age=31536000, immutable"
PRIVATE_IMMUTABLE_CACHE = "private, max-age=31536000, immutable"
CONTENT_TYPE = "application/json; charset=utf-8"
DOCUMENTS = ("features.json", "features.json.gz", "configs.json")


def expected_keys(prefix, tenant, environment, revision):
    """The six objects of an environment: current documents, then its revision's copies."""
    base = f"{prefix}/{tenant}/{environment}"
    return [f"{base}/{name}" for name in DOCUMENTS] + [f"{base}/revisions/{revision}/{name}" for name in DOCUMENTS]


def is_revision_copy(key):
    return "/revisions/" in key


class Bucket:
    def __init__(self, s3, name, prefix):
        self.s3 = s3
        self.name = name
        self.prefix = prefix
        self.manifest_key = f"{prefix}/manifest.json"

    def keys(self):
        keys = []
        for page in self.s3.get_paginator("list_objects_v2").paginate(Bucket=self.name, Prefix=self.prefix + "/"):
            keys += [item["Key"] for item in page.get("Contents", [])]
        return sorted(keys)

    def get(self, key):
        return self.s3.get_object(Bucket=self.name, Key=key)["Body"].read()

    def snapshot(self):
        """{key: bytes} of everything under the prefix."""
        return {key: self.get(key) for key in self.keys()}

    def manifest(self):
        try:
            return json.loads(self.get(self.manifest_key))
        except self.s3.exceptions.NoSuchKey:
            return None

    def check_consistent(self, when):
        """Every manifest entry's object exists and holds bytes of the entry's SHA-256 and size;
        returns the manifest (None when there is none)."""
        manifest = self.manifest()
        if manifest is None:
            return None
        contents = self.snapshot()
        for entry in manifest["files"]:
            key = f"{self.prefix}/{entry['path']}"
            expect(key in contents, f"{when}: the manifest names {key}, which the bucket does not hold")
            expect(sha256(contents[key]) == entry["sha256"] and len(contents[key]) == entry["size"],
                   f"{when}: the manifest names {key} with sha256 {entry['sha256']} size {entry['size']}, "
                   f"the bucket holds sha256 {sha256(contents[key])} size {len(contents[key])}")
        return manifest


def header(record, name):
    """A request header's value as the proxy received it (None when absent)."""
    for key, value in record["headers"]:
        if key.lower() == name.lower():
            return value
    return None


def key_of(record, bucket_name):
    """The object key a path-style request targets (undecoded: the scenarios' keys need no %XX)."""
    path = record["target"].split("?", 1)[0]
    expect(path.startswith(f"/{bucket_name}/"), f"a request outside the bucket: {record['method']} {record['target']}")
    return path[len(bucket_name) + 2:]


def counts(records):
    found = {}
    for record in records:
        found[record["method"]] = found.get(record["method"], 0) + 1
    return found


def check_never_ahead(before, records, bucket, when):
    """Replays the requests the proxy saw (PUTs that got 2xx change the bucket, in the order they
    came) from the bucket's contents `before` ({key: bytes}); fails when a manifest PUT names an
    object that does not hold its bytes yet, or when a PUT changes the bytes of an object the
    manifest in the bucket names. Returns the keys written with 2xx, in order."""
    state = {key: sha256(data) for key, data in before.items()}
    manifest = json.loads(before[bucket.manifest_key]) if bucket.manifest_key in before else None
    written = []
    for record in records:
        if record["method"] != "PUT" or not isinstance(record["outcome"], int) or not 200 <= record["outcome"] < 300:
            continue
        key = key_of(record, bucket.name)
        body = record["body"]
        written.append(key)
        if key == bucket.manifest_key:
            manifest = json.loads(body)
            for entry in manifest["files"]:
                named = f"{bucket.prefix}/{entry['path']}"
                expect(state.get(named) == entry["sha256"],
                       f"{when}: a manifest PUT names {named} with sha256 {entry['sha256']} while the bucket held "
                       f"{state.get(named) or 'no such object'}: the manifest was ahead of the objects")
        else:
            digest = sha256(body)
            if manifest is not None:
                for entry in manifest["files"]:
                    if f"{bucket.prefix}/{entry['path']}" == key:
                        expect(entry["sha256"] == digest,
                               f"{when}: PUT {key} wrote sha256 {digest} while the manifest in the bucket named it "
                               f"with {entry['sha256']}: a reader of the manifest got other bytes than it names")
        state[key] = sha256(body)
    return written


def check_put_headers(record, bucket_name, private, public_read):
    """The headers of one object PUT: type, checksum, metadata, Cache-Control, encoding, ACL,
    and If-None-Match: * exactly on revision copies."""
    key = key_of(record, bucket_name)
    body = record["body"]
    expect(header(record, "Transfer-Encoding") is None and header(record, "Content-Length") == str(len(body)),
           f"PUT {key}: expected a plain body with Content-Length, got headers {record['headers']}")
    expect_equal(header(record, "Content-Type"), CONTENT_TYPE, f"PUT {key} Content-Type")
    expect_equal(header(record, "x-amz-meta-sha256"), sha256(body), f"PUT {key} x-amz-meta-sha256")
    expect_equal(header(record, "x-amz-checksum-sha256"), base64.b64encode(hashlib.sha256(body).digest()).decode(),
                 f"PUT {key} x-amz-checksum-sha256 (base64 of the body's SHA-256)")
    expect_equal(header(record, "x-amz-content-sha256"), sha256(body), f"PUT {key} x-amz-content-sha256 (signed payload)")
    expect_equal(header(record, "Content-Encoding"), "gzip" if key.endswith(".gz") else None, f"PUT {key} Content-Encoding")
    expect_equal(header(record, "If-None-Match"), "*" if is_revision_copy(key) else None, f"PUT {key} If-None-Match")
    expect_equal(header(record, "x-amz-acl"), "public-read" if public_read and not private else None, f"PUT {key} x-amz-acl")
