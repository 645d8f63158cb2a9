"""A purge webhook receiver for check-publish: records what `flagpole publish` posts.

    receiver = PurgeReceiver("secret").start()    # receiver.url: http://127.0.0.1:PORT/purge
    receiver.fail_first(2)                        # the next 2 POSTs are answered 500
    ... flagpole publish --purge-webhook receiver.url ...
    receiver.received                             # [(verified, body), …] in order
    receiver.stop()

Each POST's signature header, `X-Flagpole-Signature-256: sha256=<hex HMAC-SHA256(secret, raw
body)>`, is checked with hmac.compare_digest; the POST is recorded as (verified, body), body
the parsed JSON (or None when it is not JSON), whatever the path. A POST whose signature does
not verify is answered 401, one of the first k after fail_first(k) 500 (recorded all the same,
so a test sees the retries), any other 200 with `{"ok": true}`. Other methods: 405.
Standard library only.
"""

import hashlib
import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SIGNATURE_HEADER = "X-Flagpole-Signature-256"


def signature(secret, body):
    """The header's value for a body: sha256=<hex>."""
    key = secret.encode("utf-8") if isinstance(secret, str) else secret
    return "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()


def verified(secret, body, header):
    return header is not None and hmac.compare_digest(signature(secret, body).encode(), header.strip().encode("utf-8", "replace"))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 60

    def log_message(self, format, *args):
        pass

    def _answer(self, status, document):
        body = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self._answer(*self.server.receiver._receive(body, self.headers.get(SIGNATURE_HEADER)))

    def _not_allowed(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self._answer(405, {"error": "POST only"})

    do_GET = do_PUT = do_DELETE = do_PATCH = _not_allowed


class PurgeReceiver:
    def __init__(self, secret, path="/purge"):
        self.secret = secret
        self.path = path
        self._lock = threading.Lock()
        self._received = []
        self._failures_left = 0
        self._server = None
        self._thread = None

    def start(self):
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.receiver = self
        self._thread = threading.Thread(target=self._server.serve_forever, name="purge-receiver", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join()
            self._server = None

    @property
    def port(self):
        return self._server.server_address[1]

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}{self.path}"

    @property
    def received(self):
        with self._lock:
            return list(self._received)

    def fail_first(self, k):
        with self._lock:
            self._failures_left = k

    def reset(self):
        with self._lock:
            self._received = []
            self._failures_left = 0

    def _receive(self, body, header):
        ok = verified(self.secret, body, header)
        try:
            document = json.loads(body)
        except ValueError:
            document = None
        with self._lock:
            self._received.append((ok, document))
            if not ok:
                return 401, {"error": f"missing or wrong {SIGNATURE_HEADER}"}
            if self._failures_left > 0:
                self._failures_left -= 1
                return 500, {"error": "failing on purpose (fail_first)"}
        return 200, {"ok": True}
