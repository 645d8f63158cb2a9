"""Tests of Scripts/purge-relay, the receiver users run beside Flagpole to purge their CDN.

    python3 Scripts/check-publish.d/purge_relay_test.py [-v]

Each test runs the relay as users do, a subprocess on a free port (`--port 0`; its port is read
from the line it logs when it listens), with `--api-url` pointing it at a fake Cloudflare or
Fastly API served here by `http.server` on localhost. The tests send it hooks signed as
Flagpole signs them (HMAC-SHA256 of the body's bytes, docs/PUBLISHING.md) and badly signed
ones, and check what it forwards to the API (batches, paths, tokens) and what it refuses. No
network beyond 127.0.0.1, no sleeps: every wait has a deadline. Standard library only;
`Scripts/check-publish` runs it first.
"""

import datetime
import hashlib
import hmac
import http.client
import json
import os
import queue
import re
import subprocess
import sys
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RELAY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "purge-relay")
SECRET = "a-shared-secret-of-32-characters"
SIGNATURE_HEADER = "X-Flagpole-Signature-256"
ZONE = "023e105f4ecef8ad9ca31a8372d0c353"
MAX_BODY = 1024 * 1024
# How long the relay may take to start or answer: a deadline, not a wait.
DEADLINE = 20


def sign(body, secret=SECRET):
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def hook_body(urls, published=None, **changes):
    """A hook's body as Flagpole writes it (compact JSON), published now unless told."""
    moment = published or datetime.datetime.now(datetime.timezone.utc)
    document = {"tenant": "acme", "environment": "production", "revision": 12, "urls": urls,
                "target": "s3://flags/mobile", "publishedAt": moment.strftime("%Y-%m-%dT%H:%M:%SZ")}
    document.update(changes)
    return json.dumps(document, separators=(",", ":")).encode()


def cdn_urls(count):
    return [f"https://cdn.example.com/flags/acme/production/{index}/features.json" for index in range(count)]


class FakeAPI:
    """Cloudflare's and Fastly's purge endpoints on localhost: records every request as
    (method, path, headers, JSON body or None) and answers with `answer(method, path, body)`,
    which tests replace; by default each API's success."""

    def __init__(self):
        self.requests = []
        self.lock = threading.Lock()
        self.answer = self.success
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                body = json.loads(raw) if raw else None
                with api.lock:
                    api.requests.append((self.command, self.path, dict(self.headers), body))
                status, document = api.answer(self.command, self.path, body)
                data = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    @staticmethod
    def success(method, path, body):
        if path.startswith("/client/v4/"):
            return 200, {"success": True, "errors": [], "result": {"id": "purge-id"}}
        return 200, {"status": "ok", "id": "fastly-purge-id"}

    def taken(self):
        with self.lock:
            return list(self.requests)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


class Relay:
    """Scripts/purge-relay as a subprocess, with only the environment given here (no proxy
    settings of the machine's, so its requests to 127.0.0.1 go straight there)."""

    def __init__(self, *arguments, secret=SECRET):
        environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONDONTWRITEBYTECODE": "1",
                       "FLAGPOLE_PURGE_SECRET": secret, "CLOUDFLARE_API_TOKEN": "cloudflare-token",
                       "FASTLY_API_TOKEN": "fastly-token"}
        self.process = subprocess.Popen([sys.executable, RELAY, "--port", "0", *arguments], env=environment,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, text=True)
        self.log = []
        lines = queue.Queue()

        def drain():
            for line in self.process.stderr:
                self.log.append(line)
                lines.put(line)
            lines.put(None)

        self.drainer = threading.Thread(target=drain, daemon=True)
        self.drainer.start()
        self.port = None
        while self.port is None:
            try:
                line = lines.get(timeout=DEADLINE)
            except queue.Empty:
                self.stop()
                raise AssertionError(f"the relay did not start within {DEADLINE} s: {''.join(self.log)}")
            if line is None:
                self.stop()
                raise AssertionError(f"the relay exited ({self.process.returncode}): {''.join(self.log)}")
            found = re.search(r"listening on http://127\.0\.0\.1:(\d+)/", line)
            self.port = int(found.group(1)) if found else None

    def request(self, method, body=b"", headers=None):
        """(status, parsed JSON answer) of one request on a new connection."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=DEADLINE)
        try:
            connection.request(method, "/", body=body, headers=headers or {})
            response = connection.getresponse()
            text = response.read().decode()
            return response.status, json.loads(text) if text else None
        finally:
            connection.close()

    def post(self, body, signature=None):
        """POSTs `body`, signed with the shared secret unless another `signature` is given."""
        headers = {"Content-Type": "application/json"}
        if signature is not False:
            headers[SIGNATURE_HEADER] = sign(body) if signature is None else signature
        return self.request("POST", body, headers)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(timeout=DEADLINE)
        self.drainer.join(timeout=DEADLINE)
        self.process.stderr.close()


class RelayTestCase(unittest.TestCase):
    """A fake API and one relay (of `arguments`, pointed at it) per test class."""

    arguments = ()

    @classmethod
    def setUpClass(cls):
        cls.api = FakeAPI()
        try:
            cls.relay = Relay(*cls.arguments, "--api-url", cls.api.url + cls.api_path)
        except BaseException:
            cls.api.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.relay.stop()
        cls.api.stop()

    def setUp(self):
        self.api.answer = FakeAPI.success
        with self.api.lock:
            self.api.requests.clear()

    def expect_refused(self, status, body, signature=None, why=""):
        answer_status, answer = self.relay.post(body, signature)
        self.assertEqual(answer_status, status, f"{why}: {answer}")
        self.assertFalse(answer["ok"], why)
        self.assertEqual(self.api.taken(), [], f"{why}: nothing may reach the CDN")
        return answer["message"]


class CloudflareTest(RelayTestCase):
    arguments = ("--cloudflare-zone", ZONE)
    api_path = "/client/v4"

    def test_a_signed_hook_purges_its_urls_30_at_a_time_with_the_token(self):
        urls = cdn_urls(65)
        status, answer = self.relay.post(hook_body(urls + urls[:3]))
        self.assertEqual((status, answer["ok"]), (200, True), answer)
        taken = self.api.taken()
        self.assertEqual([(method, path) for method, path, _, _ in taken],
                         [("POST", f"/client/v4/zones/{ZONE}/purge_cache")] * 3)
        self.assertEqual([body for _, _, _, body in taken],
                         [{"files": urls[:30]}, {"files": urls[30:60]}, {"files": urls[60:]}],
                         "in order, each URL once")
        for _, _, headers, _ in taken:
            self.assertEqual(headers.get("Authorization"), "Bearer cloudflare-token")
            self.assertEqual(headers.get("Content-Type"), "application/json")
        self.assertIn("65 URL(s)", answer["message"])

    def test_a_refused_batch_is_a_502_and_stops_the_later_ones(self):
        def refuse_second(method, path, body):
            if body["files"][0] == cdn_urls(31)[30]:
                return 200, {"success": False, "errors": [{"code": 1134, "message": "rate limited"}]}
            return FakeAPI.success(method, path, body)

        self.api.answer = refuse_second
        status, answer = self.relay.post(hook_body(cdn_urls(90)))
        self.assertEqual(status, 502, answer)
        self.assertIn("URLs 31-60", answer["message"])
        self.assertIn("rate limited", answer["message"])
        self.assertEqual(len(self.api.taken()), 2, "the third batch is not sent: Flagpole retries the whole hook")

    def test_an_api_error_status_is_a_502(self):
        self.api.answer = lambda method, path, body: (500, {"success": False, "errors": []})
        status, answer = self.relay.post(hook_body(cdn_urls(1)))
        self.assertEqual(status, 502, answer)
        self.assertIn("Cloudflare answered 500", answer["message"])

    def test_no_urls_is_taken_without_calling_the_api(self):
        status, answer = self.relay.post(hook_body([]))
        self.assertEqual(status, 200, answer)
        self.assertEqual(self.api.taken(), [])


class FastlyTest(RelayTestCase):
    arguments = ("--fastly",)
    api_path = ""

    def test_each_url_is_one_post_to_purge_its_host_and_path_with_the_key(self):
        urls = ["https://cdn.example.com/flags/acme/production/features.json",
                "https://cdn.example.com/flags/acme/production/features.json.gz"]
        status, answer = self.relay.post(hook_body(urls + urls))
        self.assertEqual(status, 200, answer)
        taken = self.api.taken()
        self.assertEqual([(method, path) for method, path, _, _ in taken],
                         [("POST", "/purge/cdn.example.com/flags/acme/production/features.json"),
                          ("POST", "/purge/cdn.example.com/flags/acme/production/features.json.gz")])
        for _, _, headers, body in taken:
            self.assertEqual(headers.get("Fastly-Key"), "fastly-token")
            self.assertEqual(headers.get("Accept"), "application/json")
            self.assertIsNone(body)

    def test_a_url_fastly_does_not_take_is_a_502(self):
        self.api.answer = lambda method, path, body: (403, {"msg": "no purge_select"})
        status, answer = self.relay.post(hook_body(cdn_urls(3)))
        self.assertEqual(status, 502, answer)
        self.assertIn("Fastly answered 403", answer["message"])
        self.assertEqual(len(self.api.taken()), 1, "the first refusal stops the hook")


class RefusalTest(RelayTestCase):
    """What the relay refuses, before anything reaches the CDN."""

    arguments = ("--cloudflare-zone", ZONE)
    api_path = "/client/v4"

    def test_a_signature_under_another_secret_is_401(self):
        body = hook_body(cdn_urls(1))
        message = self.expect_refused(401, body, sign(body, "another-secret-of-32-characters!"), "another secret")
        self.assertIn("does not match", message)

    def test_a_missing_signature_is_401(self):
        message = self.expect_refused(401, hook_body(cdn_urls(1)), signature=False, why="no header")
        self.assertIn(SIGNATURE_HEADER, message)

    def test_a_signature_of_other_bytes_is_401(self):
        signed = hook_body(cdn_urls(1))
        tampered = signed.replace(b"acme", b"evil")
        self.expect_refused(401, tampered, sign(signed), "a body changed after signing")

    def test_a_signature_without_its_prefix_or_in_capitals_is_401(self):
        body = hook_body(cdn_urls(1))
        digest = sign(body).split("=", 1)[1]
        self.expect_refused(401, body, digest, "no sha256= prefix")
        self.expect_refused(401, body, "sha256=" + digest.upper(), "upper-case hex")
        self.expect_refused(401, body, "sha1=" + digest, "another algorithm's name")

    def test_a_hook_published_too_long_ago_or_ahead_is_401_even_signed(self):
        now = datetime.datetime.now(datetime.timezone.utc)
        for published in (now - datetime.timedelta(minutes=10), now + datetime.timedelta(minutes=10)):
            message = self.expect_refused(401, hook_body(cdn_urls(1), published), why=f"published at {published}")
            self.assertIn("--max-age 300", message)

    def test_a_signed_body_that_is_not_a_hook_is_400(self):
        for body in (b"not json", b"[]", hook_body(cdn_urls(1), tenant=""), hook_body(cdn_urls(1), revision="12"),
                     hook_body(cdn_urls(1), revision=True), hook_body(["ftp://cdn.example.com/x"]),
                     hook_body(cdn_urls(1), publishedAt="2026-11-23T19:20:00")):
            self.expect_refused(400, body, why=body.decode())

    def test_a_body_over_1_mib_is_413_unread(self):
        # Only the headers are sent: the relay must answer from Content-Length, not read 1 MiB first.
        connection = http.client.HTTPConnection("127.0.0.1", self.relay.port, timeout=DEADLINE)
        try:
            connection.putrequest("POST", "/")
            connection.putheader("Content-Length", str(MAX_BODY + 1))
            connection.putheader(SIGNATURE_HEADER, sign(b""))
            connection.endheaders()
            response = connection.getresponse()
            self.assertEqual(response.status, 413)
            self.assertEqual(response.getheader("Connection"), "close")
        finally:
            connection.close()
        self.assertEqual(self.api.taken(), [])

    def test_a_negative_content_length_is_400(self):
        status, _ = self.relay.request("POST", headers={"Content-Length": "-1", SIGNATURE_HEADER: sign(b"")})
        self.assertEqual(status, 400)

    def test_methods_other_than_post_are_405(self):
        for method in ("GET", "PUT", "DELETE", "PATCH"):
            body = hook_body(cdn_urls(1)) if method != "GET" else b""
            status, answer = self.relay.request(method, body, {SIGNATURE_HEADER: sign(body)})
            self.assertEqual(status, 405, method)
            self.assertEqual(answer["message"], "POST only")
        self.assertEqual(self.api.taken(), [])

    def test_the_relay_still_serves_after_refusals(self):
        self.expect_refused(401, hook_body(cdn_urls(1)), "sha256=00", "a bad signature")
        status, _ = self.relay.post(hook_body(cdn_urls(1)))
        self.assertEqual(status, 200)
        self.assertEqual(len(self.api.taken()), 1)


class StartTest(unittest.TestCase):
    """What the relay refuses to start with."""

    def run_relay(self, *arguments, secret=SECRET):
        environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONDONTWRITEBYTECODE": "1",
                       "FLAGPOLE_PURGE_SECRET": secret, "CLOUDFLARE_API_TOKEN": "cloudflare-token"}
        return subprocess.run([sys.executable, RELAY, "--port", "0", *arguments], env=environment,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=DEADLINE)

    def test_a_secret_shorter_than_16_characters_is_refused(self):
        run = self.run_relay("--print", secret="short")
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("16 characters or more", run.stderr)

    def test_an_api_url_is_only_for_cloudflare_and_fastly_and_must_be_http(self):
        run = self.run_relay("--print", "--api-url", "http://127.0.0.1:1")
        self.assertEqual(run.returncode, 2)
        self.assertIn("--api-url is for --cloudflare-zone and --fastly", run.stderr)
        run = self.run_relay("--cloudflare-zone", ZONE, "--api-url", "127.0.0.1:1")
        self.assertEqual(run.returncode, 2)
        self.assertIn("http(s) URL", run.stderr)


class UnreachableAPITest(unittest.TestCase):
    def test_an_api_that_cannot_be_reached_is_a_502(self):
        # A port just closed: nothing listens there.
        closed = FakeAPI()
        closed.stop()
        relay = Relay("--cloudflare-zone", ZONE, "--api-url", closed.url + "/client/v4")
        try:
            status, answer = relay.post(hook_body(cdn_urls(1)))
        finally:
            relay.stop()
        self.assertEqual(status, 502, answer)
        self.assertIn("the purge failed", answer["message"])


if __name__ == "__main__":
    unittest.main()
