"""Part 3: the protocol with a client of our own, written from the spec and the server contract
(the Python provider only calls single evaluation).

    python3 protocol.py before-restart --origin URL --key fp_… --delivery-key fp_… --binary PATH --db FILE --state FILE
    python3 protocol.py after-restart  --origin URL --key fp_… --delivery-key fp_… --binary PATH --db FILE --state FILE

before-restart: single evaluation on the wire (errors, escaped keys, 405, keys of the private
environment and at the host root), then bulk evaluation: one item per flag,
a strong ETag, 304 on If-None-Match, no 304 across users or contexts, event streams, errors; the
answers and ETags are saved in --state.
after-restart (the same database, a new process): the saved answers and ETags again, then the
change stream: an event per write (CLI and admin API) with Flagpole's revision, resuming with
Last-Event-ID, the heartbeat; `?tag=` filtering; last, the 429 of the limit on new users, with
integer Retry-After, as the Python provider reads it; and keys of another tenant or scoped to
another environment refused on the private environment.
"""

import argparse
import json
import re
import subprocess
import time

from ofrep_common import (
    ALL_FLAGS,
    CONFIGS,
    FEATURE_KINDS,
    PRIVATE_ENV,
    PUBLIC_ENV,
    TESTS,
    CheckFailed,
    Client,
    EventStream,
    check_error_body,
    check_success_body,
    encoded,
    env_base,
    expect,
    expect_equal,
    expected_answer,
    fetch_pinned,
    run,
)

# Identity, so the ETag of a document is that of its plain bytes, whatever requests would accept.
PLAIN = {"Accept-Encoding": "identity"}
STRONG_ETAG = re.compile(r'^"[\x21\x23-\x7e]*"$')
EVENT_TIMEOUT = 15  # seconds: the server notices a CLI write within --poll-interval (250 ms)
HEARTBEAT = 15  # seconds between `: heartbeat` comments, by the contract


def token_window():
    """The 12-hour window a private environment's stream token is signed for (StreamTokens)."""
    return int(time.time() // (12 * 3600))

def single_path(env, name):
    prefix = env_base(env) if env else ""
    return f"{prefix}/ofrep/v1/evaluate/flags/{encoded(name)}"


def bulk_path(env, query=""):
    prefix = env_base(env) if env else ""
    return f"{prefix}/ofrep/v1/evaluate/flags{query}"


def context_of(user=None, **attributes):
    context = dict(attributes)
    if user is not None:
        context["targetingKey"] = user
    return {"context": context}


def bulk_items(exchange):
    """The bulk answer's flags by key, after checking there is one item per demo flag."""
    body = exchange.json()
    flags = body.get("flags")
    exchange.expect(isinstance(flags, list), "expected a `flags` array")
    keys = [item.get("key") for item in flags]
    exchange.expect(len(keys) == len(set(keys)), f"expected one item per flag, got repeated keys in {keys}")
    exchange.expect(set(keys) == set(ALL_FLAGS), f"expected the keys {sorted(ALL_FLAGS)}, got {sorted(map(str, keys))}")
    return body, {item["key"]: item for item in flags}


def strong_etag(exchange):
    etag = exchange.header("ETag")
    exchange.expect(etag is not None and STRONG_ETAG.match(etag), f"expected a strong ETag (\"…\", not W/), got {etag!r}")
    return etag


def cli(options, *arguments, tenant="demo"):
    command = [options.binary, *arguments, *(["--tenant", tenant] if tenant else []), "--db", options.db]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise CheckFailed(f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return result.stdout


def set_biases(options, first, second):
    """A write by the command line, as another process: the new revision it made."""
    output = cli(options, "bias", "set", "New Onboarding", str(first), str(second), "--json", "--message", "check-ofrep")
    revision = json.loads(output).get("revision")
    expect(isinstance(revision, int), f"`flagpole bias set --json` printed no revision: {output}")
    return revision


class Part:
    def __init__(self, options):
        self.options = options
        self.public = Client(options.origin, PLAIN)
        self.private = Client(options.origin, {**PLAIN, "Authorization": f"Bearer {options.key}"})
        self.counts = {}

    def count(self, what, number=1):
        self.counts[what] = self.counts.get(what, 0) + number

    # -----------------------------------------------------------------------------------------
    # Single evaluation on the wire

    def single_answers(self, client, env, user, pinned, revision, where):
        answers = {}
        for name in ALL_FLAGS:
            exchange = client.post(single_path(env, name), context_of(user)).expect_status(200)
            body = exchange.json()
            self.success(exchange, body, name, pinned, revision, where)
            if name == "discountRate":
                exchange.expect(
                    re.search(r'"value"\s*:\s*2\.0(?![0-9eE])', exchange.text),
                    "expected discountRate's value written as 2.0 (a JSON 2 is an int to the providers)",
                )
            answers[name] = body
            self.count("single")
        return answers

    def single(self):
        client = self.public
        for user in ["demo-user-7", "ofrep-protocol-user-1"]:
            pinned, _, revision = fetch_pinned(client, PUBLIC_ENV, user)
            self.single_answers(client, PUBLIC_ENV, user, pinned, revision, f"production, user {user!r}")

        # Attributes of every JSON type beside the targetingKey are the provider's to send.
        attributes = {"email": "a@example.com", "age": 42, "ratio": 0.5, "beta": False, "tags": ["a", 1], "address": {"country": "CA"}, "none": None}
        exchange = client.post(single_path(PUBLIC_ENV, "Example A/B Test"), context_of("demo-user-7", **attributes)).expect_status(200)
        pinned, _, revision = fetch_pinned(client, PUBLIC_ENV, "demo-user-7")
        self.success(exchange, exchange.json(), "Example A/B Test", pinned, revision, "with attributes of every JSON type")

        # Escaped keys: a slash inside a key, and non-ASCII bytes, are one path segment.
        exchange = client.post(single_path(PUBLIC_ENV, "Example A/B Test"), context_of("demo-user-7")).expect_status(200)
        exchange.expect(exchange.url.endswith("/flags/Example%20A%2FB%20Test"), "the path must carry %2F")
        expect_equal(exchange.json().get("key"), "Example A/B Test", f"{exchange.url}: key")
        exchange = client.post(single_path(PUBLIC_ENV, "Größentabelle"), context_of("demo-user-7")).expect_status(404)
        exchange.expect(exchange.url.endswith("/flags/Gr%C3%B6%C3%9Fentabelle"), "the path must be UTF-8, escaped")
        self.error(exchange, "FLAG_NOT_FOUND", key="Größentabelle")
        exchange = client.post(single_path(PUBLIC_ENV, "No Such Flag"), context_of("demo-user-7")).expect_status(404)
        self.error(exchange, "FLAG_NOT_FOUND", key="No Such Flag")

        # Without a targetingKey: a plain flag needs no user, a test does.
        shared, revision = self.shared_document(PUBLIC_ENV)
        exchange = client.post(single_path(PUBLIC_ENV, "Example Feature Flag"), context_of()).expect_status(200)
        self.success(exchange, exchange.json(), "Example Feature Flag", shared, revision, "without a targetingKey")
        for name in TESTS:
            exchange = client.post(single_path(PUBLIC_ENV, name), context_of()).expect_status(400)
            self.error(exchange, "TARGETING_KEY_MISSING", key=name)

        # Bodies that are not a request.
        name = "Example Feature Flag"
        for raw in [b"{not json", b"", b'{"context": {"targetingKey": "demo-user-7"}']:
            exchange = client.post(single_path(PUBLIC_ENV, name), raw=raw).expect_status(400)
            self.error(exchange, "PARSE_ERROR", key=name)
        for body in [{"context": 5}, {"context": []}, {"context": "demo-user-7"}, {"context": {"targetingKey": 7}}]:
            exchange = client.post(single_path(PUBLIC_ENV, name), body).expect_status(400)
            self.error(exchange, "INVALID_CONTEXT", key=name)

        # Other methods.
        for path in [single_path(PUBLIC_ENV, name), bulk_path(PUBLIC_ENV)]:
            for method in ["GET", "PUT", "DELETE", "PATCH"]:
                exchange = client.request(method, path).expect_status(405)
                allow = [part.strip() for part in (exchange.header("Allow") or "").split(",")]
                exchange.expect("POST" in allow, "a 405 must name the allowed methods in Allow (RFC 9110 §15.5.6), POST among them")
                self.count("405")

    def success(self, exchange, body, name, pinned, revision, where, context=None):
        """`body` (the answer of `exchange`, or an item of it) is the contract's for `name`."""
        try:
            check_success_body(body, name, expected_answer(name, pinned, context or {}), revision, f"{where}: {name!r}")
        except CheckFailed as failure:
            exchange.fail(str(failure))

    def error(self, exchange, code, key=None):
        try:
            check_error_body(exchange.json(), code, f"{exchange.method} {exchange.url}", **({"key": key} if key is not None else {}))
        except CheckFailed as failure:
            exchange.fail(str(failure))
        self.count("errors")

    def shared_document(self, env, client=None):
        exchange = (client or self.public).get(f"{env_base(env)}/features.json").expect_status(200)
        document = exchange.json()
        entries = document["features"] if isinstance(document, dict) else document
        return {entry["name"]: entry for entry in entries}, int(exchange.header("Flagpole-Revision"))

    # -----------------------------------------------------------------------------------------
    # Keys: the private environment and the host root

    def keys(self):
        anonymous = Client(self.options.origin, PLAIN)
        key = self.options.key
        wrong = "fp_" + "0" * 48
        for path, body in [(single_path(PRIVATE_ENV, "Example Feature Flag"), context_of("demo-user-7")),
                           (bulk_path(PRIVATE_ENV), context_of("demo-user-7"))]:
            anonymous.post(path, body).expect_status(401)
            for headers in [{"Authorization": f"Bearer {wrong}"}, {"X-API-Key": wrong}]:
                anonymous.post(path, body, headers=headers).expect_status(401)
            for headers in [{"Authorization": f"Bearer {key}"}, {"X-API-Key": key}]:
                anonymous.post(path, body, headers=headers).expect_status(200).json()
            self.count("keys", 5)

        # The host root, with a delivery key scoped to production: production's answers.
        delivery = Client(self.options.origin, {**PLAIN, "Authorization": f"Bearer {self.options.delivery_key}"})
        for name in ALL_FLAGS:
            body = context_of("demo-user-7")
            at_root = delivery.post(single_path(None, name), body).expect_status(200)
            in_env = self.public.post(single_path(PUBLIC_ENV, name), body).expect_status(200)
            at_root.expect(at_root.json() == in_env.json(), f"expected the answer of {in_env.url}: {in_env.text}")
        at_root = delivery.post(bulk_path(None), context_of("demo-user-7")).expect_status(200)
        bulk_items(at_root)
        x_api_key = Client(self.options.origin, {**PLAIN, "X-API-Key": self.options.delivery_key})
        x_api_key.post(single_path(None, "Example Feature Flag"), context_of("demo-user-7")).expect_status(200)
        anonymous.post(single_path(None, "Example Feature Flag"), context_of("demo-user-7")).expect_status(401)
        anonymous.post(bulk_path(None), context_of("demo-user-7")).expect_status(401)
        # A tenant-wide admin key names no environment: the root can't answer it with one.
        exchange = self.private.post(single_path(None, "Example Feature Flag"), context_of("demo-user-7"))
        exchange.expect(400 <= exchange.status < 500, "expected a 4xx: an admin key is not scoped to one environment")
        self.count("keys", len(ALL_FLAGS) + 5)

    def isolation(self):
        """Keys read only what they are for: a key of another tenant reads none of demo's private
        environments, and a delivery key scoped to production not staging. Run last, so that a
        failure here hides no other check."""
        anonymous = Client(self.options.origin, PLAIN)
        cli(self.options, "tenant", "create", "ofrep-other", tenant=False)
        created = cli(self.options, "key", "create", "--role", "admin", tenant="ofrep-other")
        other = re.search(r"fp_[0-9a-f]{48}", created)
        expect(other, f"`flagpole key create --tenant ofrep-other` printed no key: {created}")
        for headers in [{"Authorization": f"Bearer {other.group()}"}, {"Authorization": f"Bearer {self.options.delivery_key}"}]:
            for path in [single_path(PRIVATE_ENV, "Example Feature Flag"), bulk_path(PRIVATE_ENV)]:
                exchange = anonymous.post(path, context_of("demo-user-7"), headers=headers)
                exchange.expect(exchange.status in (401, 403), "expected 401 or 403: the key is not for demo/staging")
                self.count("isolation")

    # -----------------------------------------------------------------------------------------
    # Bulk evaluation and ETags

    CONTEXTS = [
        context_of("demo-user-7"),
        context_of("demo-user-8"),
        context_of("demo-user-7", development=True),
        context_of("ofrep-protocol-user-1"),
        context_of("ofrep-protocol-user-2"),
    ]

    def bulk(self):
        client = self.public
        user = "demo-user-7"
        pinned, _, revision = fetch_pinned(client, PUBLIC_ENV, user)
        singles = self.single_answers(client, PUBLIC_ENV, user, pinned, revision, f"production, user {user!r}")

        exchange = client.post(bulk_path(PUBLIC_ENV), context_of(user)).expect_status(200)
        body, items = bulk_items(exchange)
        for name in ALL_FLAGS:
            exchange.expect(items[name] == singles[name], f"the item of {name!r} differs from the single answer {singles[name]}")
        etag = strong_etag(exchange)
        expected_streams = [{"type": "sse", "endpoint": {"requestUri": f"{env_base(PUBLIC_ENV)}/changes"}, "inactivityDelaySec": 120}]
        exchange.expect(body.get("eventStreams") == expected_streams, f"expected eventStreams {expected_streams}")
        metadata = body.get("metadata")
        exchange.expect(isinstance(metadata, dict) and metadata.get("revision") == revision, f"expected metadata.revision {revision}")
        self.count("bulk")

        again = client.post(bulk_path(PUBLIC_ENV), context_of(user)).expect_status(200)
        again.expect(again.header("ETag") == etag and again.text == exchange.text, f"expected the same ETag {etag} and body again")
        for tags in [etag, f'"not-this-one", {etag}', f"W/{etag}"]:
            not_modified = client.post(bulk_path(PUBLIC_ENV), context_of(user), headers={"If-None-Match": tags})
            not_modified.expect_status(304)
            not_modified.expect(not_modified.response.content == b"", "expected no body with 304")
            not_modified.expect(not_modified.header("ETag") == etag, f"expected the 304 to carry ETag {etag}")
            self.count("304")
        client.post(bulk_path(PUBLIC_ENV), context_of(user), headers={"If-None-Match": '"not-this-one"'}).expect_status(200)
        # The re-fetch an event triggers may carry the event's metadata; it changes nothing.
        refetch = client.post(bulk_path(PUBLIC_ENV, "?flagConfigEtag=abc123&flagConfigLastModified=1771622898"), context_of(user))
        refetch.expect_status(200).expect(refetch.header("ETag") == etag, f"expected the ETag without the query, {etag}")

        # One ETag per context; another context's ETag never gives 304.
        etags = {}
        for context in self.CONTEXTS:
            answer = client.post(bulk_path(PUBLIC_ENV), context).expect_status(200)
            bulk_items(answer)
            etags[json.dumps(context)] = strong_etag(answer)
        expect(
            len(set(etags.values())) == len(etags),
            f"expected a different ETag for each context (the ETag covers the context), got {json.dumps(etags, indent=1)}",
        )
        for asked in self.CONTEXTS:
            for other in self.CONTEXTS:
                if asked is other:
                    continue
                answer = client.post(bulk_path(PUBLIC_ENV), asked, headers={"If-None-Match": etags[json.dumps(other)]})
                answer.expect(answer.status == 200, f"another context's ETag ({json.dumps(other)}) must not give 304")
                self.count("cross-context")

        # Without a targetingKey: the tests fail one by one, the rest answer.
        shared, revision = self.shared_document(PUBLIC_ENV)
        exchange = client.post(bulk_path(PUBLIC_ENV), context_of()).expect_status(200)
        _, items = bulk_items(exchange)
        for name in ALL_FLAGS:
            if name in TESTS:
                try:
                    check_error_body(items[name], "TARGETING_KEY_MISSING", f"bulk without a targetingKey: {name!r}", key=name)
                except CheckFailed as failure:
                    exchange.fail(str(failure))
            elif name in FEATURE_KINDS or CONFIGS[name][1] is not None:
                self.success(exchange, items[name], name, shared, revision, "bulk without a targetingKey")
            # mainViewTitle follows a test: the contract leaves open whether it fails or answers its default.

        # Requests that fail whole: {errorCode, errorDetails}.
        for raw in [b"{not json", b""]:
            self.error(client.post(bulk_path(PUBLIC_ENV), raw=raw).expect_status(400), "PARSE_ERROR")
        for body in [{"context": 5}, {"context": []}, {"context": {"targetingKey": 7}}]:
            self.error(client.post(bulk_path(PUBLIC_ENV), body).expect_status(400), "INVALID_CONTEXT")

        # The private environment's stream takes a token, as a browser's EventSource can't send a header.
        exchange = self.private.post(bulk_path(PRIVATE_ENV), context_of(user)).expect_status(200)
        body, _ = bulk_items(exchange)
        streams = body.get("eventStreams") or []
        exchange.expect(len(streams) == 1 and streams[0].get("type") == "sse", "expected one sse event stream")
        uri = (streams[0].get("endpoint") or {}).get("requestUri", "")
        exchange.expect(
            re.fullmatch(rf"{env_base(PRIVATE_ENV)}/changes\?token=[^&#\s]+", uri),
            f"expected requestUri {env_base(PRIVATE_ENV)}/changes?token=…, got {uri!r}",
        )
        exchange.expect(streams[0].get("inactivityDelaySec") == 120, "expected inactivityDelaySec 120")
        if uri.endswith("=" + self.options.key):
            print("check-ofrep: note: the private stream's token is the caller's own key, in a URL")
        stream = EventStream(self.options.origin, uri)
        expect(stream.status == 200 and stream.content_type.startswith("text/event-stream"),
               f"expected the tokened stream to open: {stream.describe()}")
        stream.close()
        for without in [f"{env_base(PRIVATE_ENV)}/changes", f"{env_base(PRIVATE_ENV)}/changes?token=not-a-token"]:
            refused = EventStream(self.options.origin, without)
            expect(refused.status == 401, f"expected 401 for the private stream without a valid token: {refused.describe()}")

    def save(self):
        """The bulk answers and ETags of each context, production's and one of the private
        environment's (whose answer carries a stream token signed per 12-hour window: a run that
        straddles 00:00 or 12:00 UTC between the two stages sees a new one, and that answer is
        then not compared), for after the restart."""
        saved = []
        for env, context in [(PUBLIC_ENV, context) for context in self.CONTEXTS] + [(PRIVATE_ENV, context_of("demo-user-7"))]:
            client = self.public if env == PUBLIC_ENV else self.private
            exchange = client.post(bulk_path(env), context).expect_status(200)
            saved.append({"env": env, "context": context, "etag": strong_etag(exchange), "body": exchange.text,
                          "window": token_window()})
        with open(self.options.state, "w", encoding="utf-8") as file:
            json.dump(saved, file)

    # -----------------------------------------------------------------------------------------
    # After a restart on the same database

    def same_after_restart(self):
        with open(self.options.state, encoding="utf-8") as file:
            saved = json.load(file)
        for entry in saved:
            if entry["env"] == PRIVATE_ENV and entry["window"] != token_window():
                # The stream token of the private answer changed with the window: nothing to compare.
                print(f"check-ofrep: note: the run crossed a stream-token window; {entry['env']}'s answer not compared")
                continue
            client = self.public if entry["env"] == PUBLIC_ENV else self.private
            exchange = client.post(bulk_path(entry["env"]), entry["context"]).expect_status(200)
            etag = entry["etag"]
            exchange.expect(exchange.header("ETag") == etag, f"expected the ETag before the restart, {etag}")
            exchange.expect(exchange.text == entry["body"], f"expected the body before the restart: {entry['body']}")
            client.post(bulk_path(entry["env"]), entry["context"], headers={"If-None-Match": etag}).expect_status(304)
            self.count("restart")

    def document_etags(self):
        features = self.public.get(f"{env_base(PUBLIC_ENV)}/features.json").expect_status(200).header("ETag")
        configs = self.public.get(f"{env_base(PUBLIC_ENV)}/configs.json").expect_status(200).header("ETag")
        return features, configs

    def check_event(self, event, revision, not_before, where):
        where = f"{where}: event {event!r}"
        expect_equal(event.type, "message", f"{where}: event type (OFREP: always message)")
        expect(event.id, f"{where}: expected an id, for Last-Event-ID")
        payload = event.payload()
        expect_equal(payload.get("type"), "refetchEvaluation", f"{where}: data.type")
        expect_equal(payload.get("revision"), revision, f"{where}: data.revision")
        expect(isinstance(payload.get("etag"), str) and payload["etag"], f"{where}: expected data.etag text")
        modified = payload.get("lastModified")
        expect(
            isinstance(modified, int) and not isinstance(modified, bool) and not_before - 2 <= modified <= time.time() + 2,
            f"{where}: expected data.lastModified, Unix seconds between {int(not_before)} and now, got {modified!r}",
        )
        features, configs = self.document_etags()
        for field, etag in [("featuresETag", features), ("configsETag", configs)]:
            expect(
                isinstance(payload.get(field), str) and payload[field].strip('"') == etag.strip('"'),
                f"{where}: expected data.{field} to be the ETag of the revision's document, {etag}",
            )
        return payload

    def changes(self):
        client = self.public
        user = "demo-user-7"
        before = client.post(bulk_path(PUBLIC_ENV), context_of(user)).expect_status(200)
        body, _ = bulk_items(before)
        revision = body["metadata"]["revision"]
        uri = body["eventStreams"][0]["endpoint"]["requestUri"]

        stream = EventStream(self.options.origin, uri)
        expect(stream.status == 200 and stream.content_type.startswith("text/event-stream"),
               f"expected an event stream: {stream.describe()}")
        written = time.time()
        first_revision = set_biases(self.options, 20, 80)
        expect_equal(first_revision, revision + 1, "the revision `flagpole bias set` made")
        first = stream.wait_for(
            lambda event: event.payload().get("revision", 0) > revision, EVENT_TIMEOUT,
            f"the event of revision {first_revision} (`flagpole bias set \"New Onboarding\" 20 80`)",
        )
        payload = self.check_event(first, first_revision, written, "after the first write")
        expect(not stream.skipped or all(e.payload().get("revision", 0) <= revision for e in stream.skipped),
               f"unexpected events before the write's: {stream.skipped}")
        stream.close()
        self.count("events")

        # The client re-fetches: the old ETag no longer matches, the event's metadata is welcome.
        refetch = client.post(
            bulk_path(PUBLIC_ENV, f"?flagConfigEtag={encoded(payload['etag'])}&flagConfigLastModified={payload['lastModified']}"),
            context_of(user), headers={"If-None-Match": before.header("ETag")},
        ).expect_status(200)
        body, items = bulk_items(refetch)
        refetch.expect(body["metadata"]["revision"] == first_revision, f"expected metadata.revision {first_revision}")
        for user in ["demo-user-7", "demo-user-8", "ofrep-protocol-user-3"]:
            answer = client.post(bulk_path(PUBLIC_ENV), context_of(user)).expect_status(200)
            _, items = bulk_items(answer)
            pinned, _, pinned_revision = fetch_pinned(client, PUBLIC_ENV, user)
            for name in TESTS + ["mainViewTitle"]:
                self.success(answer, items[name], name, pinned, pinned_revision,
                             f"after the write, bulk for {user!r} against the pinned document")

        # Two writes while no one listens; resuming from the first event's id brings both, in order.
        missed = [set_biases(self.options, 30, 70), set_biases(self.options, 40, 60)]
        resumed = EventStream(self.options.origin, uri, {"Last-Event-ID": first.id})
        expect(resumed.status == 200, f"expected the stream to resume: {resumed.describe()}")
        etags = {payload["etag"]}
        ids = {first.id}
        for expected_revision in missed:
            event = resumed.next_event(EVENT_TIMEOUT, f"the missed event of revision {expected_revision} (Last-Event-ID {first.id!r})")
            missed_payload = self.check_event_shape(event, expected_revision, written, f"resumed after {first.id!r}")
            etags.add(missed_payload["etag"])
            ids.add(event.id)
            self.count("events")
        expect(len(etags) == 3 and len(ids) == 3, f"expected three revisions with three etags and ids: {etags} {ids}")
        return resumed

    def check_event_shape(self, event, revision, not_before, where):
        """A missed event: its document ETags are history by now, the rest is as for a new one."""
        where = f"{where}: event {event!r}"
        expect_equal(event.type, "message", f"{where}: event type")
        payload = event.payload()
        expect_equal(payload.get("type"), "refetchEvaluation", f"{where}: data.type")
        expect_equal(payload.get("revision"), revision, f"{where}: data.revision (in order, none skipped)")
        for field in ["etag", "featuresETag", "configsETag"]:
            expect(isinstance(payload.get(field), str) and payload[field], f"{where}: expected data.{field} text")
        modified = payload.get("lastModified")
        expect(isinstance(modified, int) and not isinstance(modified, bool) and modified >= not_before - 2,
               f"{where}: expected data.lastModified in Unix seconds, got {modified!r}")
        return payload

    def tags(self, stream):
        """?tag=T filters features and configs; writes through the admin API are events too."""
        api = f"/api/v1/tenants/demo/environments/{PUBLIC_ENV}"
        tag = "ofrep-check"
        answer = self.private.request("PUT", f"{api}/features/{encoded('Example Feature Flag')}/tags", body={"tags": [tag]})
        revisions = [answer.expect_status(200).json().get("revision")]
        definition = self.private.get(f"{api}/configs/numberOfItemsToDisplay").expect_status(200).json()
        definition["tags"] = [*definition.get("tags", []), tag]
        answer = self.private.request("PUT", f"{api}/configs/numberOfItemsToDisplay", body=definition)
        revisions.append(answer.expect_status(200).json().get("revision"))
        for revision in revisions:
            event = stream.next_event(EVENT_TIMEOUT, f"the event of revision {revision} (an admin API write)")
            expect_equal(event.payload().get("revision"), revision, f"the event after a write through the admin API, {event!r}")
            self.count("events")

        everything = self.public.post(bulk_path(PUBLIC_ENV), context_of("demo-user-7")).expect_status(200)
        tagged = self.public.post(bulk_path(PUBLIC_ENV, f"?tag={tag}"), context_of("demo-user-7")).expect_status(200)
        keys = sorted(item.get("key") for item in tagged.json().get("flags", []))
        tagged.expect(keys == ["Example Feature Flag", "numberOfItemsToDisplay"], f"expected the two flags tagged {tag!r}, got {keys}")
        etag = strong_etag(tagged)
        tagged.expect(etag != everything.header("ETag"), "a filtered answer is another representation: it needs another ETag")
        self.public.post(bulk_path(PUBLIC_ENV, f"?tag={tag}"), context_of("demo-user-7"), headers={"If-None-Match": etag}).expect_status(304)
        self.public.post(bulk_path(PUBLIC_ENV), context_of("demo-user-7"), headers={"If-None-Match": etag}).expect_status(200)
        none = self.public.post(bulk_path(PUBLIC_ENV, "?tag=no-such-tag"), context_of("demo-user-7")).expect_status(200)
        none.expect(none.json().get("flags") == [], "expected no flags for a tag nothing has")
        self.count("tags", 4)


class RateLimit:
    """An anonymous client may have only so many users new to the store recorded (`serve
    --new-user-rate`, `--new-user-burst`; 10 a second, 100 at once by default): past it, an
    evaluation that would record one answers 429 with `Retry-After` in integer seconds, which
    the Python provider parses (it can't parse the spec's ISO 8601 example) and then honours.
    Run last: it leaves this client without new users for a moment."""

    LIMIT = 400  # requests in a row without a 429 before the check gives up

    def __init__(self, options):
        self.options = options
        self.client = Client(options.origin, PLAIN)
        self.users = 0

    def new_user(self):
        self.users += 1
        return f"ofrep-rate-limited-{self.users}"

    def flood(self, path):
        for _ in range(self.LIMIT):
            exchange = self.client.post(path, context_of(self.new_user()))
            if exchange.status == 429:
                retry_after = exchange.header("Retry-After") or ""
                exchange.expect(re.fullmatch(r"[0-9]+", retry_after), f"expected Retry-After in integer seconds, got {retry_after!r}")
                return exchange
            exchange.expect_status(200)
        raise CheckFailed(f"POST {path}: no 429 after {self.LIMIT} users new to the store from one anonymous client in a row")

    def check(self):
        from openfeature import api
        from openfeature.contrib.provider.ofrep import OFREPProvider
        from openfeature.evaluation_context import EvaluationContext
        from openfeature.exception import ErrorCode

        self.flood(single_path(PUBLIC_ENV, "Example MVT Test"))
        self.flood(bulk_path(PUBLIC_ENV))
        provider = OFREPProvider(f"{self.options.origin}{env_base(PUBLIC_ENV)}")
        api.set_provider(provider, domain="rate-limited")
        client = api.get_client(domain="rate-limited")
        for _ in range(5):
            retry_after = int(self.flood(single_path(PUBLIC_ENV, "Example MVT Test")).header("Retry-After"))
            details = client.get_string_details("Example MVT Test", "default", EvaluationContext(targeting_key=self.new_user()))
            if details.error_code is None:
                continue  # the client's allowance refilled between the two requests: again
            expect(
                details.error_code == ErrorCode.GENERAL and details.error_message == f"Rate limited, retry after: {retry_after}"
                and provider.retry_after is not None,
                f"expected the provider to read the 429's Retry-After ({retry_after}), got {details.error_code} "
                f"{details.error_message!r}, retry_after {provider.retry_after!r}",
            )
            if retry_after == 0:
                return
            details = client.get_string_details("Example MVT Test", "default", EvaluationContext(targeting_key="demo-user-7"))
            expect(
                details.error_code == ErrorCode.GENERAL and (details.error_message or "").startswith("OFREP evaluation paused"),
                f"expected the provider to pause until Retry-After passed, got {details.error_code} {details.error_message!r}",
            )
            return
        raise CheckFailed("the provider never met the 429 the requests before it got (five tries)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("stage", choices=["before-restart", "after-restart"])
    parser.add_argument("--origin", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--delivery-key", required=True, help="a delivery key scoped to demo/production")
    parser.add_argument("--binary", required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--state", required=True)
    options = parser.parse_args()
    part = Part(options)
    if options.stage == "before-restart":
        part.single()
        part.keys()
        part.bulk()
        part.save()
        c = part.counts
        print(
            f"check-ofrep: protocol: {c['single']} single evaluations, {c['errors']} error answers, {c['405']} 405s, "
            f"{c['keys']} key checks (private environment, host root); bulk: one item per flag, strong ETags, "
            f"{c['304']} 304s, {c['cross-context']} cross-context If-None-Match without 304"
        )
        return
    heartbeat = EventStream(options.origin, f"{env_base(PUBLIC_ENV)}/changes")
    expect(heartbeat.status == 200, f"expected an event stream: {heartbeat.describe()}")
    part.same_after_restart()
    resumed = part.changes()
    part.tags(resumed)
    resumed.close()
    RateLimit(options).check()
    wait = heartbeat.opened + HEARTBEAT + 2 - time.monotonic()
    if wait > 0:
        time.sleep(wait)
    heartbeat.close()
    expect(
        any(text == "heartbeat" for _, text in heartbeat.comments),
        f"expected a `: heartbeat` comment within {HEARTBEAT + 2} s of connecting, got comments {heartbeat.comments}",
    )
    c = part.counts
    print(
        f"check-ofrep: after a restart: {c['restart']} bulk ETags unchanged; change stream: {c['events']} events "
        f"(CLI and admin API writes) with Flagpole's revision, resumed with Last-Event-ID, heartbeat; ?tag= filters; 429 with integer Retry-After, "
        f"single and bulk, honoured by the provider"
    )
    part.isolation()
    print(f"check-ofrep: isolation: {part.counts['isolation']} requests to demo/staging with keys for elsewhere refused")


if __name__ == "__main__":
    run("protocol", main)
