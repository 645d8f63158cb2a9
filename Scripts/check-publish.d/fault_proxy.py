"""A reverse proxy on 127.0.0.1 to put between `flagpole publish` and moto, that can fail.

    proxy = FaultProxy(moto_port).start()        # proxy.port: a free port
    proxy.fail_with(503, r"/features\\.json$", times=2)   # SlowDown twice, then through
    proxy.drop_after(3)                          # 3 more requests go through, then the "server dies"
    proxy.requests                               # [(method, target), …] every request seen, in order
    proxy.clear_faults(); proxy.reset(); proxy.stop()

What reaches moto is what the client sent: the request line's method and target (path and
query, byte for byte: never decoded, re-encoded or normalised), every header in order with its
name's case and value as received (Host too, which SigV4 signs; moto takes any host for
path-style requests), and the body (by Content-Length, or a `Transfer-Encoding: chunked` body
passed on in the same framing). Each request goes upstream on a new connection; the client's
own connection is kept alive (HTTP/1.1) across requests, faults included, unless it asked to
close. moto's answer comes back with its status, headers and body, except its hop-by-hop
headers (Connection: close, Keep-Alive, Transfer-Encoding; a chunked answer is sent with
Content-Length).

Faults:
- fail_with(status, pattern, times=None, code=None, message=None): a request whose target
  (path and query, as sent) matches the regular expression `pattern` (re.search) is answered
  `status` with an S3 error body (<Error><Code>SlowDown</Code>… for 503) and not forwarded; the
  first `times` such requests, or all when None. Rules are tried in the order given.
- drop_after(n): counting from the call, n more requests are forwarded; after that every new
  connection is closed as soon as it is accepted, and a request on a connection already open is
  read and the connection closed without an answer: the server dying mid-publish.
- clear_faults() removes both; reset() also forgets the requests seen.

`exchanges` lists (method, target, outcome) with outcome the status answered or "dropped";
`sent` lists every request seen, in the order they came, as a dict: method, target, headers
([(name, value)] as received), body (bytes as on the wire) and outcome (as in `exchanges`;
None while the request is still in flight);
`forwarded` and `connections_accepted` count requests sent upstream and client connections.
Standard library only.
"""

import http.client
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

S3_ERRORS = {
    400: ("BadRequest", "Bad Request."),
    403: ("AccessDenied", "Access Denied."),
    404: ("NoSuchKey", "The specified key does not exist."),
    409: ("OperationAborted", "A conflicting conditional operation is currently in progress."),
    429: ("TooManyRequests", "Please reduce your request rate."),
    500: ("InternalError", "We encountered an internal error. Please try again."),
    502: ("BadGateway", "Bad Gateway."),
    503: ("SlowDown", "Please reduce your request rate."),
    504: ("GatewayTimeout", "Gateway Timeout."),
}
HOP_BY_HOP_ANSWER = {"connection", "keep-alive", "transfer-encoding", "proxy-connection"}
MAX_LINE = 65536


class _Rule:
    def __init__(self, status, pattern, times, code, message):
        self.status = status
        self.pattern = re.compile(pattern)
        self.remaining = times
        default_code, default_message = S3_ERRORS.get(status, ("ServiceUnavailable", "Service Unavailable."))
        self.code = code or default_code
        self.message = message or default_message


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, proxy):
        self.proxy = proxy
        super().__init__(("127.0.0.1", 0), _Handler)

    def verify_request(self, request, client_address):
        # A refused connection is closed by socketserver without reading anything.
        return not self.proxy._dropping()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 120  # an idle keep-alive connection

    def setup(self):
        super().setup()
        self.server.proxy._opened(self.connection)

    def finish(self):
        try:
            super().finish()
        finally:
            self.server.proxy._closed(self.connection)

    def log_message(self, format, *args):
        pass

    def handle_one_request(self):
        # As BaseHTTPRequestHandler's, for any method (no do_GET …).
        try:
            self.raw_requestline = self.rfile.readline(MAX_LINE + 1)
            if len(self.raw_requestline) > MAX_LINE:
                self.send_error(414)
                return
            if not self.raw_requestline:
                self.close_connection = True
                return
            if not self.parse_request():
                return
            self.server.proxy._handle(self)
            self.wfile.flush()
        except (TimeoutError, ConnectionError, OSError):
            self.close_connection = True

    def read_body(self):
        """The request body as it came on the wire (chunked framing kept)."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raw = bytearray()
            while True:
                line = self.rfile.readline(MAX_LINE + 1)
                if not line:
                    raise ConnectionError("the client closed the connection inside a chunked body")
                raw += line
                size = int(line.split(b";", 1)[0].strip(), 16)
                if size == 0:
                    while True:  # trailers, up to the empty line
                        trailer = self.rfile.readline(MAX_LINE + 1)
                        raw += trailer
                        if trailer in (b"\r\n", b"\n", b""):
                            return bytes(raw)
                raw += self.rfile.read(size + 2)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def answer(self, status, headers, body, reason=None):
        self.send_response_only(status, reason)
        for name, value in headers:
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD" and body:
            self.wfile.write(body)


class FaultProxy:
    def __init__(self, upstream_port, upstream_host="127.0.0.1"):
        self.upstream = (upstream_host, upstream_port)
        self._lock = threading.Lock()
        self._requests = []
        self._exchanges = []
        self._sent = []
        self._rules = []
        self._drop_limit = None
        self._forwarded = 0
        self._forwarded_total = 0
        self._accepted = 0
        self._connections = set()
        self._server = None
        self._thread = None

    # -- control ----------------------------------------------------------------------------

    def start(self):
        self._server = _Server(self)
        self._thread = threading.Thread(target=self._server.serve_forever, name="fault-proxy", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join()
        self._server = None

    @property
    def port(self):
        return self._server.server_address[1]

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    @property
    def requests(self):
        with self._lock:
            return list(self._requests)

    @property
    def exchanges(self):
        with self._lock:
            return list(self._exchanges)

    @property
    def sent(self):
        """Every request seen, in order: {"method", "target", "headers", "body", "outcome"}."""
        with self._lock:
            return list(self._sent)

    @property
    def connections_accepted(self):
        """How many client connections were served since the last reset (keep-alive: few)."""
        with self._lock:
            return self._accepted

    @property
    def forwarded(self):
        """How many requests went upstream since the last reset."""
        with self._lock:
            return self._forwarded_total

    def fail_with(self, status, path_pattern, times=None, code=None, message=None):
        with self._lock:
            self._rules.append(_Rule(status, path_pattern, times, code, message))

    def drop_after(self, n):
        with self._lock:
            self._drop_limit = n
            self._forwarded = 0

    def clear_faults(self):
        with self._lock:
            self._rules = []
            self._drop_limit = None
            self._forwarded = 0

    def reset(self):
        self.clear_faults()
        with self._lock:
            self._requests = []
            self._exchanges = []
            self._sent = []
            self._forwarded_total = 0
            self._accepted = 0

    # -- serving ----------------------------------------------------------------------------

    def _opened(self, connection):
        with self._lock:
            self._connections.add(connection)
            self._accepted += 1

    def _closed(self, connection):
        with self._lock:
            self._connections.discard(connection)

    def _dropping(self):
        with self._lock:
            return self._drop_limit is not None and self._forwarded >= self._drop_limit

    def _decide(self, method, target, headers=(), body=b""):
        """Under the lock: ('drop' | a rule to answer with | 'forward' (then counted), the record)."""
        with self._lock:
            self._requests.append((method, target))
            record = {"method": method, "target": target, "headers": list(headers), "body": body, "outcome": None}
            self._sent.append(record)
            if self._drop_limit is not None and self._forwarded >= self._drop_limit:
                return "drop", record
            for rule in self._rules:
                if rule.remaining != 0 and rule.pattern.search(target):
                    if rule.remaining is not None:
                        rule.remaining -= 1
                    return rule, record
            self._forwarded += 1
            self._forwarded_total += 1
            return "forward", record

    def _record(self, record, outcome):
        with self._lock:
            record["outcome"] = outcome
            self._exchanges.append((record["method"], record["target"], outcome))

    def _handle(self, handler):
        method, target = handler.command, handler.path
        body = handler.read_body()
        decision, record = self._decide(method, target, handler.headers.items(), body)
        if decision == "drop":
            handler.close_connection = True
            self._record(record, "dropped")
            return
        if isinstance(decision, _Rule):
            xml = (
                '<?xml version="1.0" encoding="UTF-8"?>\n'
                f"<Error><Code>{decision.code}</Code><Message>{decision.message}</Message>"
                f"<RequestId>FAULTPROXY</RequestId></Error>"
            ).encode()
            length = "0" if method == "HEAD" else str(len(xml))
            self._record(record, decision.status)  # before answering: the client may look at once
            handler.answer(decision.status, [("Content-Type", "application/xml"), ("Content-Length", length)], xml)
            return
        try:
            status, reason, headers, answer_body = self._forward(handler, body)
        except (OSError, http.client.HTTPException) as error:
            message = f"fault_proxy: upstream {self.upstream[0]}:{self.upstream[1]} failed: {error!r}\n".encode()
            self._record(record, 502)
            handler.answer(502, [("Content-Type", "text/plain"), ("Content-Length", str(len(message)))], message)
            return
        self._record(record, status)
        handler.answer(status, headers, answer_body, reason)

    def _forward(self, handler, body):
        head = [f"{handler.command} {handler.path} HTTP/1.1\r\n"]
        for name, value in handler.headers.items():
            head.append(f"{name}: {value}\r\n")
        head.append("\r\n")
        # http.server decoded the request line and headers as ISO-8859-1: this gives the bytes back.
        raw = "".join(head).encode("iso-8859-1") + body
        with socket.create_connection(self.upstream, timeout=60) as upstream:
            upstream.sendall(raw)
            response = http.client.HTTPResponse(upstream, method=handler.command)
            response.begin()  # skips any 100 Continue
            answer_body = response.read()
            headers = []
            chunked = False
            has_length = False
            for name, value in response.getheaders():
                lower = name.lower()
                if lower == "transfer-encoding":
                    chunked = True
                if lower == "content-length":
                    has_length = True
                if lower in HOP_BY_HOP_ANSWER:
                    continue
                headers.append((name, value))
            no_body = handler.command == "HEAD" or response.status in (204, 304) or 100 <= response.status < 200
            if (chunked or not has_length) and not no_body:
                headers = [(n, v) for n, v in headers if n.lower() != "content-length"]
                headers.append(("Content-Length", str(len(answer_body))))
            return response.status, response.reason, headers, answer_body
