"""check-publish, parts 2 to 8: the real `flagpole publish` and `serve --publish-to` against moto's
S3 server (in this process), through a FaultProxy that records every request and can fail them.

    python3 scenarios.py --binary PATH --work DIR [PART ...]

Parts (all by default, in this order): first-publish (2, 3, 4), faults (5a, 5b, 5d, 5e),
credentials (5c, 6), purge (7), serve (8). Each part has its own database and prefix in the one
bucket, so a failed part does not spoil the next; the first failed check ends its part. Exits 1
when any part failed. README.md in this folder says what each part checks.
"""

import argparse
import gzip
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
import traceback
import urllib.request
from datetime import datetime, timedelta, timezone

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import s3  # noqa: E402
from common import (  # noqa: E402
    CONTENT_TYPE, DOCUMENTS, IMMUTABLE_CACHE, PRIVATE_CACHE, PRIVATE_IMMUTABLE_CACHE, STANDARD_CACHE, Bucket,
    CheckFailed, FlagpoleBug, check_never_ahead, check_put_headers, clean_environment, counts,
    expect, expect_equal, expected_keys, is_revision_copy, key_of, make_database, sha256, wait_until,
)
from fault_proxy import FaultProxy  # noqa: E402
from purge_receiver import PurgeReceiver  # noqa: E402

BUCKET = "flagpole"
ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"


class Context:
    def __init__(self, binary, work):
        self.binary = binary
        self.work = work
        self.server, self.endpoint = s3.start_moto()
        self.moto_port = int(self.endpoint.rsplit(":", 1)[1])
        # A real key pair of moto's IAM: it signs correctly whether moto checks signatures or not,
        # so the readers here and the flagpole runs that should succeed use it throughout.
        self.access, self.secret = s3.signed_credentials(self.endpoint)
        s3.stop_checking_signatures(self.endpoint)
        self.s3 = s3.client(self.endpoint, self.access, self.secret)
        self.s3.create_bucket(Bucket=BUCKET)
        self.proxy = FaultProxy(self.moto_port).start()
        self.home = os.path.join(work, "home")
        self.plain = clean_environment(self.home)  # no credentials at all
        self.environment = dict(self.plain, AWS_ACCESS_KEY_ID=self.access, AWS_SECRET_ACCESS_KEY=self.secret)

    def database(self, name):
        return make_database(self.binary, os.path.join(self.work, f"{name}.sqlite"), self.environment)

    def stop(self):
        self.proxy.stop()
        self.server.stop()


def successful_puts(records):
    return [r for r in records if r["method"] == "PUT" and isinstance(r["outcome"], int) and 200 <= r["outcome"] < 300]


def put_keys(records, bucket):
    return [key_of(r, bucket.name) for r in successful_puts(records)]


def listed_after(text, heading):
    """The indented lines after a heading line in a message (the keys a failed run lists)."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.startswith(heading):
            found = []
            for following in lines[index + 1:]:
                if not following.startswith("  "):
                    break
                found.append(following.strip())
            return found
    return None


def check_request_order(records, bucket, when):
    """GET of the manifest first; every revision copy's PUT before every current document's;
    manifest.json's PUT the last request of the run."""
    expect(records and records[0]["method"] == "GET" and key_of(records[0], bucket.name) == bucket.manifest_key,
           f"{when}: the first request should be GET {bucket.manifest_key}: {[(r['method'], r['target']) for r in records[:3]]}")
    puts = [(index, key_of(r, bucket.name)) for index, r in enumerate(records) if r["method"] == "PUT"]
    revision_puts = [index for index, key in puts if is_revision_copy(key)]
    current_puts = [index for index, key in puts if key != bucket.manifest_key and not is_revision_copy(key)]
    if revision_puts and current_puts:
        expect(max(revision_puts) < min(current_puts),
               f"{when}: a current document was PUT before a revision copy: {[key for _, key in puts]}")
    last = records[-1]
    expect(last["method"] == "PUT" and key_of(last, bucket.name) == bucket.manifest_key,
           f"{when}: the last request should be PUT {bucket.manifest_key}, got {last['method']} {last['target']}")


def check_environment_objects(fp, bucket, tree, tenant, environment, revision, private, public_read=None):
    """Reads the environment's six objects back: bytes as exported, headers, metadata, ACL, 304."""
    current_cache = PRIVATE_CACHE if private else STANDARD_CACHE
    exported = fp.export(tenant, environment)
    exported_revision = fp.export(tenant, environment, revision)
    expect_equal(exported_revision, exported, f"export of {tenant}/{environment} --revision {revision} (the current one)")
    for key in expected_keys(bucket.prefix, tenant, environment, revision):
        got = s3.read_back(bucket.s3, bucket.name, key)
        body = got["Body"]
        relative = key[len(bucket.prefix) + 1:]
        expect_equal(sha256(body), sha256(tree[relative]), f"{key}: sha256 of the bytes vs `flagpole export --all`'s {relative}")
        if key.endswith("features.json"):
            expect_equal(body, exported, f"{key}: bytes vs `flagpole export --tenant {tenant} --env {environment}`")
        if key.endswith(".gz"):
            expect_equal(gzip.decompress(body), exported, f"{key}: gunzipped bytes vs the export")
        expect_equal(got["ContentType"], CONTENT_TYPE, f"{key} Content-Type")
        expect_equal(got["ContentEncoding"], "gzip" if key.endswith(".gz") else None, f"{key} Content-Encoding")
        expected_cache = (PRIVATE_IMMUTABLE_CACHE if private else IMMUTABLE_CACHE) if is_revision_copy(key) else current_cache
        expect_equal(got["CacheControl"], expected_cache, f"{key} Cache-Control")
        expect_equal(got["Metadata"].get("sha256"), sha256(body), f"{key} x-amz-meta-sha256")
        expect_equal(s3.conditional_get(bucket.endpoint, bucket.name, key, got["ETag"], *bucket.signing),
                     304, f"{key}: GET with If-None-Match: its ETag {got['ETag']}")
        expect_equal(s3.conditional_get(bucket.endpoint, bucket.name, key, '"0123456789abcdef0123456789abcdef"',
                                        *bucket.signing),
                     200, f"{key}: GET with If-None-Match: another ETag")
        if public_read is not None:
            grants = bucket.s3.get_object_acl(Bucket=bucket.name, Key=key)["Grants"]
            everyone = [g["Permission"] for g in grants if g["Grantee"].get("URI") == ALL_USERS]
            if public_read and not private:
                expect("READ" in everyone, f"{key}: --public-read, public environment: expected AllUsers READ, grants {grants}")
            else:
                expect(not everyone, f"{key}: expected no AllUsers grant ({'private environment' if private else 'no --public-read'}), grants {grants}")


def make_bucket(context, prefix):
    bucket = Bucket(context.s3, BUCKET, prefix)
    bucket.endpoint = context.endpoint
    bucket.signing = (context.access, context.secret)
    # What the manifest must name after each successful run: every revision copy ever published
    # (they stay, immutable) and the current documents of the latest revisions.
    bucket.expected = {}
    return bucket


def expect_published(fp, bucket, include, when):
    """After a successful run that covered `include`: the manifest names exactly what it must."""
    bucket.expected.update(manifest_expectation(bucket, fp.environments(), include))
    return check_manifest_matches(bucket, bucket.expected, when)


def check_manifest_matches(bucket, expected, when):
    """The bucket holds exactly `expected` ({key: {tenant, environment, revision, cacheControl}}),
    and the manifest names all of it but the revision copies older than each environment's latest
    (they stay in the bucket, out of the manifest, so an expiry rule on revisions/ is safe), each
    with the sha256 and size of what the bucket holds."""
    manifest = bucket.check_consistent(when)
    expect(manifest is not None, f"{when}: no {bucket.manifest_key} in the bucket")
    latest = {}
    for key, entry in expected.items():
        place = (entry["tenant"], entry["environment"])
        latest[place] = max(latest.get(place, 0), entry["revision"])
    expected_named = {key: entry for key, entry in expected.items()
                      if not is_revision_copy(key) or entry["revision"] == latest[(entry["tenant"], entry["environment"])]}
    named = {f"{bucket.prefix}/{entry['path']}": entry for entry in manifest["files"]}
    expect_equal(sorted(named), sorted(expected_named), f"{when}: the objects the manifest names")
    for key, entry in named.items():
        for field, value in expected_named[key].items():
            expect_equal(entry[field], value, f"{when}: manifest entry {key} {field}")
    expect_equal(bucket.keys(), sorted(list(expected) + [bucket.manifest_key]), f"{when}: the objects in the bucket")
    return manifest


def manifest_expectation(bucket, environments, include):
    expected = {}
    for (tenant, environment), entry in environments.items():
        if (tenant, environment) not in include:
            continue
        private = entry["private"]
        for key in expected_keys(bucket.prefix, tenant, environment, entry["revision"]):
            own = entry["cacheControl"]
            if private and own and "private" not in own.lower() and "no-store" not in own.lower():
                own = f"private, {own}"  # a private environment's own, never left for a shared cache
            cache = ((PRIVATE_IMMUTABLE_CACHE if private else IMMUTABLE_CACHE) if is_revision_copy(key)
                     else own or (PRIVATE_CACHE if private else STANDARD_CACHE))
            expected[key] = {"tenant": tenant, "environment": environment, "revision": entry["revision"], "cacheControl": cache}
    return expected


def expect_code(run, code, when):
    expect(run.code == code, f"{when}: expected exit {code}: {run.describe()}")


# ---------------------------------------------------------------------------------------------
# 2, 3, 4


def part_first_publish(context):
    fp = context.database("first")
    proxy = context.proxy
    bucket = make_bucket(context, "cdn")
    to = f"s3://{BUCKET}/cdn"
    environments = fp.environments()
    public = {("demo", "production"), ("acme", "production")}

    # 2. The first publish, without the private environment, with --public-read.
    proxy.reset()
    run = fp.publish(to, proxy.url, "--public-read")
    expect_code(run, 0, "first publish")
    report = run.report
    expect_equal(report["outcome"], "published", "first publish: outcome")
    expect_equal(report["skippedPrivate"], ["demo/staging"], "first publish: skippedPrivate")
    expect_equal(report["manifestWritten"], True, "first publish: manifestWritten")
    records = proxy.sent
    check_request_order(records, bucket, "first publish")
    expect_equal(counts(records), report["requests"], "first publish: the report's request counts vs the requests S3 got")
    expect_equal(counts(records), {"GET": 1, "PUT": 13}, "first publish: requests (GET manifest, 12 objects, manifest)")
    for record in successful_puts(records):
        key = key_of(record, BUCKET)
        if key != bucket.manifest_key:
            check_put_headers(record, BUCKET, private="/staging/" in key, public_read=True)
    expect_equal(sorted(put_keys(records, bucket)), sorted(report["written"]), "first publish: `written` vs the PUTs S3 got")
    expect_published(fp, bucket, public, "after the first publish")
    expect(not any("/staging/" in key for key in bucket.keys()), "the private demo/staging was published without --include-private")
    manifest_object = s3.read_back(context.s3, BUCKET, bucket.manifest_key)
    expect_equal(manifest_object["CacheControl"], "no-cache", f"{bucket.manifest_key} Cache-Control")
    expect_equal(manifest_object["ContentType"], CONTENT_TYPE, f"{bucket.manifest_key} Content-Type")
    tree = fp.cdn_tree()
    for tenant, environment in sorted(public):
        check_environment_objects(fp, bucket, tree, tenant, environment, environments[(tenant, environment)]["revision"],
                                  private=False, public_read=True)
    print("  2: first publish: 12 objects read back as exported, headers, 304, AllUsers READ; manifest.json last")

    # 2. Then the private environment by name, --public-read still given.
    proxy.reset()
    before = bucket.snapshot()
    run = fp.publish(to, proxy.url, "--public-read", "--include-private", "demo/staging")
    expect_code(run, 0, "publish --include-private demo/staging")
    records = proxy.sent
    check_request_order(records, bucket, "publish --include-private")
    check_never_ahead(before, records, bucket, "publish --include-private")
    staging = expected_keys("cdn", "demo", "staging", environments[("demo", "staging")]["revision"])
    expect_equal(sorted(put_keys(records, bucket)), sorted(staging + [bucket.manifest_key]),
                 "publish --include-private: what was PUT (staging's six objects and the manifest)")
    for record in successful_puts(records):
        if key_of(record, BUCKET) != bucket.manifest_key:
            check_put_headers(record, BUCKET, private=True, public_read=True)
    check_environment_objects(fp, bucket, tree, "demo", "staging", environments[("demo", "staging")]["revision"],
                              private=True, public_read=True)
    every = set(environments)
    manifest = expect_published(fp, bucket, every, "after --include-private")
    tree_manifest = json.loads(tree["manifest.json"])
    expect_equal(manifest, tree_manifest, "the bucket's manifest vs `flagpole export --all`'s manifest.json")
    print("  2: --include-private demo/staging: private Cache-Control, no public ACL despite --public-read")

    # 3. Nothing changed: one GET, no PUT, with or without the private environment.
    for arguments in (["--public-read", "--include-private", "demo/staging"], []):
        proxy.reset()
        run = fp.publish(to, proxy.url, *arguments)
        expect_code(run, 0, f"second publish {arguments}")
        expect_equal(counts(proxy.sent), {"GET": 1}, f"second publish {arguments}, nothing changed: requests")
        expect_equal(run.report["outcome"], "unchanged", f"second publish {arguments}: outcome")
        expect_equal(run.report["written"], [], f"second publish {arguments}: written")
    proxy.reset()
    run = fp.publish(to, proxy.url, json_report=False)
    expect_code(run, 0, "second publish (text)")
    expect(re.search(r"is up to date", run.out), f"second publish (text) should say up to date: {run.describe()}")
    expect_equal(counts(proxy.sent), {"GET": 1}, "second publish (text): requests")
    print("  3: nothing changed: exactly GET manifest.json, no PUT, outcome unchanged")

    # 4. One environment changes: the dry run says what, then only that is sent.
    revision = fp.new_revision("demo")
    tree = fp.cdn_tree()
    before = bucket.snapshot()
    changed_current = [f"cdn/demo/production/{name}" for name in DOCUMENTS
                       if before[f"cdn/demo/production/{name}"] != tree[f"demo/production/{name}"]]
    expect("cdn/demo/production/features.json" in changed_current, "the bias change did not change features.json")
    to_upload = sorted(changed_current + [f"cdn/demo/production/revisions/{revision}/{name}" for name in DOCUMENTS])
    status = {(s["tenant"], s["environment"]): s for s in fp.status(to)}
    expect_equal({k: status[("demo", "production")][k] for k in ("state", "publishedRevision", "currentRevision")},
                 {"state": "behind", "publishedRevision": revision - 1, "currentRevision": revision},
                 "publish status of demo/production after bias set, before publishing")
    proxy.reset()
    run = fp.publish(to, proxy.url, "--dry-run", "--include-private", "demo/staging")
    expect_code(run, 0, "--dry-run")
    expect_equal(counts(proxy.sent), {"GET": 1}, "--dry-run: requests")
    expect_equal(run.report["dryRun"], True, "--dry-run: dryRun")
    expect_equal(sorted(o["key"] for o in run.report["objects"] if o["action"] == "upload"), to_upload,
                 "--dry-run: the objects it would upload")
    expect(all(o["reason"] for o in run.report["objects"] if o["action"] == "upload"), "--dry-run: an upload without a reason")
    proxy.reset()
    run = fp.publish(to, proxy.url, "--dry-run", "--include-private", "demo/staging", json_report=False)
    expect_code(run, 0, "--dry-run (text)")
    would = sorted(re.findall(r"^would upload\s+(\S+)", run.out, re.MULTILINE))
    expect_equal(would, sorted(to_upload + [bucket.manifest_key]), "--dry-run (text): its `would upload` lines")
    expect_equal(counts(proxy.sent), {"GET": 1}, "--dry-run (text): requests")
    expect_equal(bucket.snapshot(), before, "the bucket after two dry runs")

    proxy.reset()
    run = fp.publish(to, proxy.url, "--include-private", "demo/staging")
    expect_code(run, 0, "publish after bias set")
    records = proxy.sent
    check_request_order(records, bucket, "publish after bias set")
    check_never_ahead(before, records, bucket, "publish after bias set")
    puts = put_keys(records, bucket)
    expect_equal(sorted(key for key in puts if key != bucket.manifest_key), to_upload,
                 "publish after bias set: the objects PUT (only demo/production's changed ones)")
    expect_equal(puts.count(bucket.manifest_key), 2,
                 "publish after bias set: manifest PUTs (the interim one without the replaced documents, then the last)")
    expect_published(fp, bucket, every, "after the bias change")
    check_environment_objects(fp, bucket, tree, "demo", "production", revision, private=False)
    after = bucket.snapshot()
    for key, data in before.items():
        if not key.startswith("cdn/demo/production/") and key != bucket.manifest_key:
            expect_equal(after[key], data, f"{key}, untouched by demo/production's change")
    print(f"  4: bias set: dry run lists {len(to_upload)} objects, no PUT; then exactly those and 2 manifest PUTs")

    # 4. A Cache-Control change alone re-sends the current documents, not the revision copies.
    fp.sql("UPDATE environments SET cache_control = 'public, max-age=5', delivery_version = delivery_version + 1 "
           "WHERE name = 'production' AND tenant_id = (SELECT id FROM tenants WHERE slug = 'acme')")
    before = bucket.snapshot()
    proxy.reset()
    run = fp.publish(to, proxy.url, "--include-private", "demo/staging")
    expect_code(run, 0, "publish after a Cache-Control change")
    records = proxy.sent
    check_never_ahead(before, records, bucket, "publish after a Cache-Control change")
    acme_current = sorted(f"cdn/acme/production/{name}" for name in DOCUMENTS)
    expect_equal(sorted(k for k in put_keys(records, bucket) if k != bucket.manifest_key), acme_current,
                 "publish after acme/production's Cache-Control changed: the objects PUT")
    reasons = {o["key"]: o["reason"] for o in run.report["objects"] if o["action"] == "uploaded"}
    expect_equal(sorted(reasons), acme_current, "after a Cache-Control change: uploaded objects")
    for key in acme_current:
        expect_equal(s3.read_back(context.s3, BUCKET, key)["CacheControl"], "public, max-age=5", f"{key} Cache-Control")
        expect_equal(bucket.get(key), before[key], f"{key}: the same bytes, only headers changed")
    expect_published(fp, bucket, every, "after a Cache-Control change")
    print("  4: a Cache-Control change re-sends acme's 3 current documents only")

    # 2. A private environment with a Cache-Control of its own keeps it, with `private` in front, and
    #    still gets no public ACL.
    fp.sql("UPDATE environments SET cache_control = 'max-age=60', delivery_version = delivery_version + 1 "
           "WHERE name = 'staging'")
    proxy.reset()
    run = fp.publish(to, proxy.url, "--public-read", "--include-private", "demo/staging")
    expect_code(run, 0, "publish after demo/staging (private) set Cache-Control: max-age=60")
    staging_current = [f"cdn/demo/staging/{name}" for name in DOCUMENTS]
    expect_equal(sorted(k for k in put_keys(proxy.sent, bucket) if k != bucket.manifest_key), sorted(staging_current),
                 "publish after demo/staging's Cache-Control changed: the objects PUT")
    for key in staging_current:
        expect_equal(s3.read_back(context.s3, BUCKET, key)["CacheControl"], "private, max-age=60",
                     f"{key} Cache-Control (a private environment's own, with private in front)")
        grants = context.s3.get_object_acl(Bucket=BUCKET, Key=key)["Grants"]
        acl = [header_value for record in successful_puts(proxy.sent) if key_of(record, BUCKET) == key
               for name, header_value in record["headers"] if name.lower() == "x-amz-acl"]
        if acl or any(g["Grantee"].get("URI") == ALL_USERS for g in grants):
            raise FlagpoleBug(
                f"{key}: the PRIVATE environment demo/staging, whose own Cache-Control is `max-age=60`, was PUT with "
                f"x-amz-acl {acl} under --public-read and now grants AllUsers READ ({grants}). `flagpole publish "
                f"--public-read --include-private demo/staging` must never make a private environment's objects public; "
                f"Publisher.headers(of:) decides by `cacheControl.hasPrefix(\"private\")`, not by the environment being private.")
    print("  2: a private environment with its own Cache-Control (max-age=60): no public ACL")


# ---------------------------------------------------------------------------------------------
# 5a, 5b, 5d, 5e


def check_failed_run(run, records, before, bucket, when):
    """A failed run: exit 1, the written keys listed (or "No object was written."), the manifest
    never ahead of the objects, during the run and after it. Returns the keys written."""
    expect_code(run, 1, when)
    written = check_never_ahead(before, records, bucket, when)
    bucket.check_consistent(when)
    objects = [key for key in written if key != bucket.manifest_key]
    if run.report is not None:
        expect_equal(run.report["outcome"], "failed", f"{when}: outcome")
        expect_equal(run.report["manifestWritten"], False, f"{when}: manifestWritten")
        expect_equal(sorted(run.report["written"]), sorted(written), f"{when}: the report's `written` vs the PUTs S3 took")
    else:
        listed = listed_after(run.err, "Written before the failure")
        if objects:
            expect(listed is not None, f"{when}: stderr does not list what was written: {run.describe()}")
            expect_equal(sorted(listed), sorted(objects), f"{when}: the keys stderr lists as written vs the PUTs S3 took")
        else:
            expect("No object was written." in run.err, f"{when}: stderr should say no object was written: {run.describe()}")
        # What stderr says of the manifest matches what the run did to it.
        said = "was rewritten without the documents" if bucket.manifest_key in written else "is left as it was"
        expect(said in run.err, f"{when}: stderr should say the manifest {said}: {run.describe()}")
    return objects


def check_complete(fp, bucket, include, when, records=None):
    """After a successful run: the manifest names every object of the environments, each as
    exported, and the bucket holds nothing else; revision copies re-sent after a failed run were
    either new (200) or found with the same bytes (412, then HEAD)."""
    expect_published(fp, bucket, include, when)
    tree = fp.cdn_tree()
    for tenant, environment in include:
        for name in DOCUMENTS:
            key = f"{bucket.prefix}/{tenant}/{environment}/{name}"
            expect_equal(sha256(bucket.get(key)), sha256(tree[f"{tenant}/{environment}/{name}"]), f"{when}: {key} vs the export")
    if records:
        for index, record in enumerate(records):
            if record["method"] == "PUT" and is_revision_copy(record["target"]) and record["outcome"] == 412:
                expect(any(r["method"] == "HEAD" and r["target"] == record["target"] for r in records[index + 1:]),
                       f"{when}: PUT {record['target']} answered 412 and no HEAD checked the copy's bytes")


def part_faults(context):
    fp = context.database("faults")
    proxy = context.proxy
    bucket = make_bucket(context, "faults")
    to = f"s3://{BUCKET}/faults"
    public = {("demo", "production"), ("acme", "production")}
    proxy.reset()
    expect_code(fp.publish(to, proxy.url), 0, "faults: the first publish")
    check_complete(fp, bucket, public, "faults: the first publish")

    # 5a and 5e: every PUT of demo/production/features.json answered 503 SlowDown.
    for mode in ("text", "json"):
        fp.new_revision("demo")
        before = bucket.snapshot()
        old_manifest = json.loads(before[bucket.manifest_key])
        proxy.reset()
        proxy.fail_with(503, r"/faults/demo/production/features\.json$")
        started = time.monotonic()
        run = fp.publish(to, proxy.url, "--retries", "2", json_report=mode == "json")
        records = proxy.sent
        when = f"503 on demo/production/features.json ({mode})"
        written = check_failed_run(run, records, before, bucket, when)
        attempts = [r for r in records if r["method"] == "PUT" and r["target"].endswith("/faults/demo/production/features.json")]
        expect_equal(len(attempts), 3, f"{when}: PUTs of the failing object (1 + --retries 2)")
        message = run.report["error"] if mode == "json" else run.err
        expect("503" in message and "SlowDown" in message, f"{when}: the error should name 503 SlowDown: {message!r}")
        if mode == "text":
            expect("after 3 attempts" in run.err, f"{when}: stderr should say after 3 attempts: {run.describe()}")
        expect(time.monotonic() - started < 30, f"{when}: took {time.monotonic() - started:.1f} s")
        # 5e: documents rewritten by the failed run are not named with their old sha256.
        manifest = bucket.manifest()
        rewritten = [key for key in written if not is_revision_copy(key)]
        expect(rewritten, f"{when}: expected the run to rewrite some current document before failing (got {written})")
        for key in rewritten:
            for old in old_manifest["files"]:
                if f"{bucket.prefix}/{old['path']}" == key:
                    stale = [e for e in manifest["files"] if e["path"] == old["path"] and e["sha256"] == old["sha256"]]
                    expect(not stale, f"{when}: {key} was rewritten but the manifest still names its old sha256 {old['sha256']}")
        status = {(s["tenant"], s["environment"]): s for s in fp.status(to)}
        expect_equal(status[("demo", "production")]["state"], "failing", f"{when}: publish status of demo/production")
        expect("SlowDown" in (status[("demo", "production")]["lastError"] or ""), f"{when}: lastError {status[('demo', 'production')]}")
        proxy.reset()
        run = fp.publish(to, proxy.url)
        expect_code(run, 0, f"{when}, then the faults cleared")
        check_complete(fp, bucket, public, f"{when}, then the faults cleared", proxy.sent)
        expect_equal({s["state"] for s in fp.status(to)}, {"upToDate"}, f"{when}, then the faults cleared: publish status")
    print("  5a/5e: 503 on one object: exit 1 after 3 attempts, written keys listed, manifest never ahead or stale; rerun completes")

    # 5b: the server "dies" after n requests, for every n a publish of one change needs.
    fp.new_revision("demo")
    proxy.reset()
    run = fp.publish(to, proxy.url, "--dry-run")
    needed = 1 + sum(1 for o in run.report["objects"] if o["action"] == "upload") + 2  # GET, objects, 2 manifests
    for n in range(needed):
        if n:
            fp.new_revision("demo" if n % 2 else "acme")
        before = bucket.snapshot()
        proxy.reset()
        proxy.drop_after(n)
        run = fp.publish(to, proxy.url, "--retries", "2", "--timeout", "5", json_report=n % 2 == 0)
        records = proxy.sent
        when = f"server gone after {n} requests"
        check_failed_run(run, records, before, bucket, when)
        proxy.reset()
        run = fp.publish(to, proxy.url)
        expect_code(run, 0, f"{when}, then back")
        check_complete(fp, bucket, public, f"{when}, then back", proxy.sent)
    print(f"  5b: server gone after n = 0..{needed - 1} requests: exit 1, manifest never ahead; each next run completes")

    # 5d: no such bucket.
    proxy.reset()
    run = fp.publish("s3://flagpole-missing/faults", proxy.url, json_report=False)
    expect_code(run, 1, "publish to a missing bucket")
    expect("NoSuchBucket" in run.err, f"missing bucket: stderr should name NoSuchBucket: {run.describe()}")
    expect("aws s3 mb s3://flagpole-missing" in run.err or "Create the bucket flagpole-missing" in run.err,
           f"missing bucket: stderr should say to create it: {run.describe()}")
    expect("No object was written." in run.err, f"missing bucket: {run.describe()}")
    expect("Run the same publish again" not in run.err, f"missing bucket: a retry can't help, and stderr says it would: {run.describe()}")
    expect_equal([r["method"] for r in proxy.sent if r["method"] != "GET"], [], "missing bucket: requests other than GET")
    expect("flagpole-missing" not in [b["Name"] for b in context.s3.list_buckets()["Buckets"]], "the missing bucket was created")
    print("  5d: missing bucket: exit 1, NoSuchBucket and how to create it, nothing written")

    # A revision copy already in the bucket with other bytes is never replaced.
    revision = fp.new_revision("demo")
    squatted = f"faults/demo/production/revisions/{revision}/features.json"
    context.s3.put_object(Bucket=BUCKET, Key=squatted, Body=b"{}")
    before = bucket.snapshot()
    proxy.reset()
    run = fp.publish(to, proxy.url, json_report=False)
    check_failed_run(run, proxy.sent, before, bucket, "a revision copy with other bytes in the bucket")
    expect("already holds other bytes" in run.err, f"a revision copy with other bytes: {run.describe()}")
    expect_equal(bucket.get(squatted), b"{}", f"{squatted}, which must never be replaced")
    print("  5f: a revision copy holding other bytes: exit 1, not replaced, manifest not ahead")


# ---------------------------------------------------------------------------------------------
# 5c, 6


def check_no_secrets(texts, secrets_, when):
    for text in texts:
        for secret in secrets_:
            expect(secret not in text, f"{when}: {secret[:4]}… appears in the output:\n{text}")


def write_credentials(path, profile, access, secret):
    temporary = path + ".new"
    with open(temporary, "w") as handle:
        handle.write(f"[{profile}]\naws_access_key_id = {access}\naws_secret_access_key = {secret}\n")
    os.replace(temporary, path)


def part_credentials(context):
    fp = context.database("credentials")
    proxy = context.proxy
    bucket = make_bucket(context, "creds")
    to = f"s3://{BUCKET}/creds"
    public = {("demo", "production"), ("acme", "production")}
    wrong_secret = secrets.token_urlsafe(30)[:40]
    wrong_key = "AKIA" + secrets.token_hex(8).upper()
    credentials_file = os.path.join(context.work, "credentials-ci")
    profile_environment = dict(context.plain, AWS_SHARED_CREDENTIALS_FILE=credentials_file)
    s3.check_signatures(context.endpoint)
    try:
        # 5c: wrong credentials, signatures checked: the env's secret, the env's key, a profile's secret.
        cases = [
            ("a wrong secret in AWS_SECRET_ACCESS_KEY", dict(context.plain, AWS_ACCESS_KEY_ID=context.access,
                                                             AWS_SECRET_ACCESS_KEY=wrong_secret), [],
             "SignatureDoesNotMatch", "the environment (AWS_ACCESS_KEY_ID)"),
            ("an unknown AWS_ACCESS_KEY_ID", dict(context.plain, AWS_ACCESS_KEY_ID=wrong_key,
                                                  AWS_SECRET_ACCESS_KEY=context.secret), [],
             "InvalidAccessKeyId", "the environment (AWS_ACCESS_KEY_ID)"),
            ("a wrong secret in profile ci", profile_environment, ["--profile", "ci"],
             "SignatureDoesNotMatch", f"profile ci in {credentials_file}"),
        ]
        write_credentials(credentials_file, "ci", context.access, wrong_secret)
        for when, environment, arguments, code, source in cases:
            for json_report in (False, True):
                proxy.reset()
                # A 403 is sent again (new keys take a moment to spread in IAM): once here.
                run = fp.publish(to, proxy.url, *arguments, "--retries", "1", environment=environment,
                                 json_report=json_report)
                expect_code(run, 1, when)
                message = run.report["error"] if json_report else run.err
                expect(code in message, f"{when}: the error should name {code}: {run.describe()}")
                expect(source in message, f"{when}: the error should name the credentials' source ({source}): {run.describe()}")
                check_no_secrets([run.out, run.err], [wrong_secret, context.secret, wrong_key, context.access], when)
                expect_equal([r["method"] for r in proxy.sent], ["GET", "GET"],
                             f"{when}: requests (the manifest's GET, refused, sent once more)")
                expect("after 2 attempts" in message, f"{when}: the error should say it tried twice: {run.describe()}")
                expect("Run the same publish again" not in message,
                       f"{when}: running again can't help wrong credentials, and the output says it would: {run.describe()}")
                expect_equal(bucket.keys(), [], f"{when}: objects in the bucket")
        status_text = fp.run("publish", "status").out + fp.run("publish", "status", "--json").out
        check_no_secrets([status_text], [wrong_secret, context.secret, wrong_key, context.access], "publish status after 5c")
        print("  5c: wrong secret, unknown key, wrong profile: exit 1 after one more try, the S3 code and the source named, no key or secret printed")

        # 6: a profile's credentials, env key variables unset; then a wrong pair in them, ignored for --profile.
        write_credentials(credentials_file, "ci", context.access, context.secret)
        proxy.reset()
        run = fp.publish(to, proxy.url, "--profile", "ci", environment=profile_environment)
        expect_code(run, 0, "publish --profile ci (the moto IAM key in AWS_SHARED_CREDENTIALS_FILE)")
        check_complete(fp, bucket, public, "publish --profile ci")
        aws = subprocess.run([sys.executable, "-m", "awscli", "s3api", "head-object", "--bucket", BUCKET,
                              "--key", bucket.manifest_key, "--profile", "ci", "--endpoint-url", context.endpoint],
                             env=profile_environment, capture_output=True, text=True, timeout=60)
        expect(aws.returncode == 0, f"the AWS CLI with the same profile file could not read the manifest: {aws.stderr}")
        fp.new_revision("demo")
        with_wrong_pair = dict(profile_environment, AWS_ACCESS_KEY_ID=wrong_key, AWS_SECRET_ACCESS_KEY=wrong_secret)
        proxy.reset()
        run = fp.publish(to, proxy.url, environment=with_wrong_pair)
        expect_code(run, 1, "control: the wrong pair in AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY without --profile")
        proxy.reset()
        run = fp.publish(to, proxy.url, "--profile", "ci", environment=with_wrong_pair)
        expect_code(run, 0, "--profile ci with a wrong pair in AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY")
        expect_equal(run.report["outcome"], "published", "--profile ci with a wrong pair in the env: outcome")
        check_complete(fp, bucket, public, "--profile ci with a wrong pair in the env")
        fp.new_revision("acme")
        proxy.reset()
        run = fp.publish(to, proxy.url, environment=dict(profile_environment, AWS_PROFILE="ci"))
        expect_code(run, 0, "AWS_PROFILE=ci, no key variables")
        check_complete(fp, bucket, public, "AWS_PROFILE=ci")
        print("  6: --profile ci from AWS_SHARED_CREDENTIALS_FILE works (signatures checked), wins over key variables; AWS_PROFILE too")

        # Keys that need %XX in the path are signed the way S3 checks them (straight to moto).
        for prefix in ("creds ü/a b+c=d&e", "creds%7E~(x)"):
            encoded = make_bucket(context, prefix)
            run = fp.publish(f"s3://{BUCKET}/{prefix}", context.endpoint)
            expect_code(run, 0, f"publish to s3://{BUCKET}/{prefix} with signatures checked")
            check_complete(fp, encoded, public, f"publish to s3://{BUCKET}/{prefix}")
        print("  6: prefixes with spaces, +, =, &, %, ü: signed right (signatures checked), every object in place")
    finally:
        s3.stop_checking_signatures(context.endpoint)


# ---------------------------------------------------------------------------------------------
# 7


def part_purge(context):
    fp = context.database("purge")
    proxy = context.proxy
    bucket = make_bucket(context, "purged")
    to = f"s3://{BUCKET}/purged"
    secret = secrets.token_hex(20)
    secret_file = os.path.join(context.work, "purge-secret")
    with open(secret_file, "w") as handle:
        handle.write(secret + "\n")
    receiver = PurgeReceiver(secret).start()
    try:
        expect_code(fp.publish(to, proxy.url), 0, "purge: the first publish")
        check_complete(fp, bucket, {("demo", "production"), ("acme", "production")}, "purge: the first publish")
        hook = ["--purge-url", receiver.url, "--purge-base-url", "https://cdn.example.com"]

        def check_posts(posts, revision, records, when):
            expect(posts and all(ok for ok, _ in posts), f"{when}: POSTs whose signature does not verify: {posts}")
            changed = sorted(key for key in put_keys(records, bucket)
                             if key.startswith("purged/demo/production/") and not is_revision_copy(key))
            expected_urls = [f"https://cdn.example.com/{key}" for key in changed]
            expect("https://cdn.example.com/purged/demo/production/features.json" in expected_urls, f"{when}: {expected_urls}")
            for _, body in posts:
                expect_equal({k: body.get(k) for k in ("tenant", "environment", "revision", "urls", "target")},
                             {"tenant": "demo", "environment": "production", "revision": revision, "urls": expected_urls,
                              "target": to}, f"{when}: the hook's body")
                published = datetime.fromisoformat(body["publishedAt"].replace("Z", "+00:00"))
                expect(abs(datetime.now(timezone.utc) - published) < timedelta(minutes=5), f"{when}: publishedAt {body['publishedAt']}")

        # One verified POST, for the changed environment only; none when nothing changed.
        revision = fp.new_revision("demo")
        proxy.reset()
        run = fp.publish(to, proxy.url, *hook, "--purge-secret-file", secret_file)
        expect_code(run, 0, "publish with the purge hook")
        check_posts(receiver.received, revision, proxy.sent, "purge hook")
        expect_equal(len(receiver.received), 1, "purge hook: POSTs (one environment changed)")
        purges = {(e["tenant"], e["environment"]): e["purge"] for e in run.report["environments"]}
        expect_equal(purges, {("demo", "production"): {"outcome": "sent"}, ("acme", "production"): None}, "purge hook: report")
        receiver.reset()
        run = fp.publish(to, proxy.url, *hook, "--purge-secret-file", secret_file)
        expect_code(run, 0, "publish with the purge hook, nothing changed")
        expect_equal(receiver.received, [], "purge hook, nothing changed: POSTs")
        print("  7: one signed POST for demo/production with its https://cdn.example.com/… URLs; none when unchanged")

        # The receiver fails twice: retried, delivered. The secret from FLAGPOLE_PURGE_SECRET.
        revision = fp.new_revision("demo")
        receiver.reset()
        receiver.fail_first(2)
        proxy.reset()
        run = fp.publish(to, proxy.url, *hook, environment=dict(context.environment, FLAGPOLE_PURGE_SECRET=secret))
        expect_code(run, 0, "purge hook answering 500 twice")
        posts = receiver.received
        expect_equal(len(posts), 3, "purge hook answering 500 twice: POSTs (2 refused, then taken)")
        check_posts(posts, revision, proxy.sent, "purge hook answering 500 twice")
        expect_equal(posts[0][1], posts[2][1], "the retried POST's body")
        purges = {(e["tenant"], e["environment"]): e["purge"] for e in run.report["environments"]}
        expect_equal(purges[("demo", "production")], {"outcome": "sent"}, "purge hook answering 500 twice: report")
        print("  7: the hook answering 500 twice: sent again, delivered on the third POST")

        # A secret under 16 characters is refused before anything is sent.
        proxy.reset()
        run = fp.publish(to, proxy.url, *hook, environment=dict(context.environment, FLAGPOLE_PURGE_SECRET="short"))
        expect(run.code != 0 and "16" in run.err, f"a 5-character purge secret should be refused: {run.describe()}")
        expect_equal(proxy.sent, [], "a refused purge secret: requests")

        # The receiver gone: the publish succeeds, the status says the purge failed.
        receiver.stop()
        fp.new_revision("demo")
        proxy.reset()
        run = fp.publish(to, proxy.url, *hook, "--purge-secret-file", secret_file, json_report=False)
        expect_code(run, 0, "purge hook unreachable")
        expect("purge hook for demo/production failed" in run.err, f"purge hook unreachable: {run.describe()}")
        status = {(s["tenant"], s["environment"]): s for s in fp.status(to)}
        expect_equal(status[("demo", "production")]["lastPurge"], "failed", "publish status lastPurge of demo/production")
        expect_equal(status[("demo", "production")]["state"], "upToDate", "publish status state of demo/production")
        check_no_secrets([run.out, run.err], [secret], "purge hook unreachable")
        print("  7: the hook unreachable: exit 0, `publish status` says lastPurge failed")
    finally:
        receiver.stop()


# ---------------------------------------------------------------------------------------------
# 8


class Server:
    """`flagpole serve`, started and waited for by Scripts/lib/serve.sh, as every check starts it."""

    helper = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib", "serve.sh")

    def __init__(self, binary, db, arguments, environment, log_path):
        self.log_path = log_path
        started = subprocess.run([self.helper, log_path, "--db", db, *arguments],
                                 env={**environment, "FLAGPOLE_BIN": binary}, capture_output=True, text=True)
        if started.returncode != 0:
            raise CheckFailed(f"flagpole serve did not start:\n{started.stderr}")
        pid, self.base = started.stdout.split("\n")[:2]
        self.pid = int(pid)

    def output(self):
        with open(self.log_path) as handle:
            return handle.read()

    def get(self, path):
        with urllib.request.urlopen(self.base + path, timeout=10) as response:
            return response.read()

    def metric(self, name, target, tenant, environment):
        """A publish series of `target`, which the log names with the endpoint beside it when it is
        not AWS's own (`s3://bucket/prefix at http://127.0.0.1:PORT`)."""
        text = self.get("/metrics").decode()
        pattern = (re.escape(f'{name}{{target="{target}') + r'(?: at [^"]*)?'
                   + re.escape(f'",tenant="{tenant}",environment="{environment}"}}') + r" (\S+)")
        found = re.search(pattern, text)
        return float(found.group(1)) if found else None

    def stop(self):
        # Not this process's child (the helper started it): SIGTERM, then wait for it to be gone.
        try:
            os.kill(self.pid, signal.SIGTERM)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                os.kill(self.pid, 0)
                with open(f"/proc/{self.pid}/stat") as stat:
                    if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                        return  # exited; whoever adopted it reaps it
                time.sleep(0.05)
            os.kill(self.pid, signal.SIGKILL)
        except (ProcessLookupError, FileNotFoundError):
            pass


def check_delivery_settings_published(context, fp, server, bucket, every):
    """PATCH acme/production's Cache-Control through the admin API of the running server: the
    server's PublishService is to publish environments with "a new revision (or new delivery
    settings)", so the bucket's current documents must get the new Cache-Control."""
    created = fp.run("key", "create", "--tenant", "acme", "--role", "admin", "--name", "check-publish").out
    key = re.search(r"fp_[0-9a-f]{48}", created)
    expect(key, f"flagpole key create printed no key: {created}")
    request = urllib.request.Request(
        server.base + "/api/v1/tenants/acme/environments/production", method="PATCH",
        data=json.dumps({"cacheControl": "public, max-age=7"}).encode(),
        headers={"Authorization": f"Bearer {key.group(0)}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        expect_equal(response.status, 200, "PATCH /api/v1/tenants/acme/environments/production")
    with urllib.request.urlopen(server.base + "/t/acme/production/features.json", timeout=10) as response:
        expect_equal(response.headers["Cache-Control"], "public, max-age=7", "the server's own Cache-Control after the PATCH")

    def published():
        return all(s3.read_back(context.s3, BUCKET, f"served/acme/production/{name}")["CacheControl"] == "public, max-age=7"
                   for name in DOCUMENTS)

    try:
        wait_until(published, 10, "acme/production's new Cache-Control in the bucket")
    except CheckFailed:
        found = s3.read_back(context.s3, BUCKET, "served/acme/production/features.json")["CacheControl"]
        raise FlagpoleBug(
            "serve --publish-to did not publish a delivery-settings change: after PATCH "
            "/api/v1/tenants/acme/environments/production {\"cacheControl\": \"public, max-age=7\"} (200; the server itself "
            f"now answers that Cache-Control), the bucket's served/acme/production/features.json still has {found!r} "
            "10 s later (--publish-delay 200). DeliveryCache.State.merge returns true only when the revision or "
            "generation changed, so ChangeBroadcaster.notice, and with it watch(), never hears of new delivery "
            "settings, although PublishService and watch() say they publish them. `flagpole publish` does send "
            "them (part first-publish, Cache-Control change).") from None
    check_complete(fp, bucket, every, "serve --publish-to, after a Cache-Control change")
    print("  8: a Cache-Control change through the admin API: published with it, no new revision needed")


def part_serve(context):
    bugs = []
    fp = context.database("serve")
    bucket = make_bucket(context, "served")
    to = f"s3://{BUCKET}/served"
    every = set(fp.environments())
    server = Server(context.binary, fp.db, ["--publish-to", to, "--endpoint", context.endpoint, "--publish-delay", "200",
                                            "--publish-private", "demo/staging"],
                    context.environment, os.path.join(context.work, "serve.log"))
    try:
        def everything_published():
            manifest = bucket.manifest()
            return manifest and len(manifest["files"]) == 6 * len(every)

        wait_until(everything_published, 15, f"serve --publish-to to put every environment in {to}")
        check_complete(fp, bucket, every, "serve --publish-to, at start")
        revision = fp.new_revision("demo")
        exported = fp.export("demo", "production")
        wait_until(lambda: bucket.get("served/demo/production/features.json") == exported, 15,
                   f"the bucket's demo/production/features.json to be revision {revision}'s export")

        def up_to_date():
            status = [s for s in fp.status(to)]
            return {(s["tenant"], s["environment"]): s["state"] for s in status} == {path: "upToDate" for path in every} and status

        status = wait_until(up_to_date, 10, f"`publish status --to {to}` to say upToDate for {sorted(every)}")
        demo = [s for s in status if (s["tenant"], s["environment"]) == ("demo", "production")][0]
        expect_equal(demo["publishedRevision"], revision, "publish status: demo/production publishedRevision")
        check_complete(fp, bucket, every, "serve --publish-to, after bias set")
        expect_equal(server.get("/t/demo/production/features.json"), exported, "the server's features.json vs the export")
        expect_equal(server.metric("flagpole_publish_revision", to, "demo", "production"), float(revision),
                     "/metrics flagpole_publish_revision of demo/production")
        expect_equal(server.metric("flagpole_publish_behind_revisions", to, "demo", "production"), 0.0,
                     "/metrics flagpole_publish_behind_revisions")
        expect_equal(server.metric("flagpole_publish_failing", to, "demo", "production"), 0.0, "/metrics flagpole_publish_failing")
        print(f"  8: serve --publish-to: everything at start, revision {revision} in the bucket after bias set; status and /metrics agree")

        # New delivery settings through the admin API are published too (no new revision).
        try:
            check_delivery_settings_published(context, fp, server, bucket, every)
        except FlagpoleBug as bug:
            bugs.append(bug)
    finally:
        server.stop()

    # Rotation: a wrong secret in the profile file (signatures checked), then the right one.
    credentials_file = os.path.join(context.work, "credentials-rotated")
    wrong_secret = secrets.token_urlsafe(30)[:40]
    write_credentials(credentials_file, "ci", context.access, wrong_secret)
    environment = dict(context.plain, AWS_SHARED_CREDENTIALS_FILE=credentials_file)
    rotated = make_bucket(context, "rotated")
    target = f"s3://{BUCKET}/rotated"
    public = {("demo", "production"), ("acme", "production")}
    s3.check_signatures(context.endpoint)
    server = None
    try:
        server = Server(context.binary, fp.db, ["--publish-to", target, "--endpoint", context.endpoint,
                                                "--publish-delay", "100", "--profile", "ci"],
                        environment, os.path.join(context.work, "serve-rotated.log"))

        def failing():
            states = {(s["tenant"], s["environment"]): s for s in fp.status(target)}
            return states and all(s["state"] == "failing" for s in states.values()) and states

        states = wait_until(failing, 15, f"`publish status --to {target}` to say failing with the wrong secret")
        error = states[("demo", "production")]["lastError"] or ""
        expect("SignatureDoesNotMatch" in error, f"serve with a wrong secret: lastError {error!r}")
        expect_equal(server.metric("flagpole_publish_failing", target, "demo", "production"), 1.0,
                     "/metrics flagpole_publish_failing with the wrong secret")
        expect_equal(rotated.keys(), [], "serve with a wrong secret: objects written")
        write_credentials(credentials_file, "ci", context.access, context.secret)
        rotated_at = time.monotonic()

        def recovered():
            states = {(s["tenant"], s["environment"]): s["state"] for s in fp.status(target)}
            return states == {path: "upToDate" for path in public}

        wait_until(recovered, 30, f"`publish status --to {target}` to say upToDate after the credentials file was fixed")
        check_complete(fp, rotated, public, "serve after the credentials were rotated")
        expect_equal(server.metric("flagpole_publish_failing", target, "demo", "production"), 0.0,
                     "/metrics flagpole_publish_failing after the rotation")
        check_no_secrets([server.output(), json.dumps(fp.status())], [wrong_secret, context.secret], "serve with rotated credentials")
        print(f"  8: rotated credentials: failing with the wrong secret, upToDate {time.monotonic() - rotated_at:.1f} s after the file was fixed")
    finally:
        s3.stop_checking_signatures(context.endpoint)
        if server:
            server.stop()
    if bugs:
        raise FlagpoleBug("\n".join(str(bug) for bug in bugs))


PARTS = {
    "first-publish": part_first_publish,
    "faults": part_faults,
    "credentials": part_credentials,
    "purge": part_purge,
    "serve": part_serve,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("parts", nargs="*", choices=[[]] + list(PARTS), default=[])
    arguments = parser.parse_args()
    # A SIGTERM unwinds like Ctrl-C: the `finally` blocks stop the servers this started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    context = Context(os.path.abspath(arguments.binary), os.path.abspath(arguments.work))
    failed = []
    try:
        for name in arguments.parts or list(PARTS):
            started = time.monotonic()
            print(f"check-publish: {name}", flush=True)
            try:
                PARTS[name](context)
            except FlagpoleBug as bug:
                failed.append(name)
                print(f"check-publish: {name}: FAILED on what looks like a FLAGPOLE BUG:\n{bug}", flush=True)
            except CheckFailed as failure:
                failed.append(name)
                print(f"check-publish: {name}: FAILED:\n{failure}", flush=True)
            except Exception:  # noqa: BLE001 - a crash of the check is a failure of the part
                failed.append(name)
                print(f"check-publish: {name}: FAILED with an exception:\n{traceback.format_exc()}", flush=True)
            else:
                print(f"check-publish: {name}: passed ({time.monotonic() - started:.1f} s)", flush=True)
    finally:
        context.stop()
    if failed:
        print(f"check-publish: FAILED: {', '.join(failed)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
