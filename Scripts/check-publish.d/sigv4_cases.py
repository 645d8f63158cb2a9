"""Prints a JSON fixture of AWS Signature Version 4 cases for S3, signed by botocore.

    python3 Scripts/check-publish.d/sigv4_cases.py [--seed N] [--count N] > FILE

Regenerate the committed fixture with the defaults (byte-identical on every run with the same
botocore; the file names the version in "generator"):

    python3 Scripts/check-publish.d/sigv4_cases.py > Tests/Fixtures/sigv4/botocore-s3.json

Each case is a request built here with `botocore.awsrequest.AWSRequest` (never captured from a
client) and signed with `botocore.auth.S3SigV4Auth` at a fixed time: `add_auth` reads the clock
through `botocore.auth.get_current_datetime` (a name imported from botocore.compat), which is
patched for the call. The canonical request and string to sign are the values `add_auth` itself
computed (a subclass records what `canonical_request` and `string_to_sign` return inside it).

What botocore 1.43 does, read from its source, and so what the cases hold:

- The canonical URI is the URL's path as given: S3SigV4Auth neither normalises (`a//b`, `./x`,
  `../y` stay) nor encodes it again. So the URL carries each key encoded once, the way S3 wants:
  every byte but A-Za-z0-9 `-_.~` and `/` as %XX, upper-case hex.
- The canonical query is the URL's raw query split on `&` and `=`, sorted by (key, value) and
  NOT re-encoded; a key without `=` becomes `key=`. So every query here is written already in
  SigV4 form (each name and value encoded like a key, `/` too); the check below proves
  botocore's answer is then what the SigV4 specification gives.
- Host is not a header of the cases: botocore signs `host` from the URL (lower-case, without
  `:80` on http or `:443` on https, in brackets for IPv6).
- Header values are trimmed and runs of whitespace made one space (`' '.join(value.split())`);
  repeated names (case-insensitive) are joined with `,` in the order given. Only spaces are used
  here: Python's split() also folds tabs and Unicode spaces, which the specification does not.
- It never signs connection, expect, keep-alive, proxy-authenticate, proxy-authorization, te,
  trailer, transfer-encoding, upgrade, user-agent, x-amzn-trace-id: none is given here.
- The payload is always signed (hex SHA-256 in X-Amz-Content-SHA256, never UNSIGNED-PAYLOAD):
  S3SigV4Auth signs on http, and on https unless the request has Content-MD5 (or a context
  checksum) and then the context's `payload_signing_enabled` is False; it is set True here.
- Added headers: X-Amz-Date, then X-Amz-Security-Token (with a session token), then
  X-Amz-Content-SHA256, in that order and spelling; then Authorization.
"""

import argparse
import base64
import datetime
import hashlib
import hmac
import json
import sys
from random import Random
from unittest import mock
from urllib.parse import quote, unquote_to_bytes, urlsplit

import botocore
import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

DEFAULT_SEED = 20261123
DEFAULT_COUNT = 200

REGIONS = [
    "us-east-1", "us-east-2", "us-west-2", "eu-west-1", "eu-west-3", "eu-central-1", "eu-north-1",
    "ap-southeast-2", "ap-northeast-1", "ap-south-1", "sa-east-1", "ca-central-1", "me-south-1",
    "af-south-1", "il-central-1", "us-gov-west-1", "cn-north-1", "auto", "garage", "fr-par",
]
BUCKETS = ["flagpole", "flagpole-cdn", "acme.features", "my-bucket-123", "b0", "cdn.example.com"]
# Keys S3 neither normalises nor double-encodes: each must reach the canonical URI as given.
SPECIAL_KEYS = [
    "features.json", "cdn/acme/production/features.json", "a//b", "./x", "../y", "a/./b/../c",
    "a b+c=d&e", "ü", "%", "%25", "100%/done", "é/日本語/😀.json", "trailing/", "/leading",
    "~user/file_name-1.2", "a?b#c", "semi;colon,comma:colon@at", "quote\"'s", "[brackets]{braces}",
    "tab\there", "plus+plus", "star*bang!", "dollar$paren()", "back\\slash", "caret^pipe|tick`",
    "space at end ", " space at start", "..", ".", "a%2Fb", "nbsp\u00a0here", "ﬁ-ligature",
]
KEY_ALPHABET = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~/"
    " !\"#$%&'()*+,:;<=>?@[\\]^`{|}" "üéßøÅ日本語Ωж😀"
)
QUERY_VALUE_ALPHABET = "abcXYZ019-_.~/ +=&%?#:@,;!*'()ü日"


def s3_encode(text):
    """Every UTF-8 byte but A-Za-z0-9 - _ . ~ / as %XX, upper-case: a key in an S3 path."""
    return quote(text.encode("utf-8"), safe="/~")


def query_encode(text):
    """Every UTF-8 byte but A-Za-z0-9 - _ . ~ as %XX, upper-case: a query name or value."""
    return quote(text.encode("utf-8"), safe="~")


def random_text(rng, alphabet, low, high):
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(low, high)))


def random_key(rng):
    if rng.random() < 0.45:
        return rng.choice(SPECIAL_KEYS)
    parts = [random_text(rng, KEY_ALPHABET.replace("/", ""), 1, 10) for _ in range(rng.randint(1, 4))]
    return "/".join(parts)


def base_url(rng, bucket):
    """(scheme://authority, path prefix before the key) in one of the addressing styles."""
    region_host = f"s3.{rng.choice(REGIONS)}.amazonaws.com"
    choice = rng.randrange(10)
    if choice == 0:
        return f"http://127.0.0.1:{rng.randint(1024, 65535)}", f"/{bucket}"
    if choice == 1:
        return f"http://localhost:{rng.choice([9000, 4566, 5000, 8333])}", f"/{bucket}"
    if choice == 2:
        return f"http://[::1]:{rng.randint(1024, 65535)}", f"/{bucket}"
    if choice == 3:
        return f"https://{region_host}", f"/{bucket}"
    if choice == 4:
        return f"https://minio.example.test:{rng.choice([9443, 8443, 4443])}", f"/{bucket}"
    if choice == 5:
        # An explicit default port: botocore leaves it out of the signed host.
        return rng.choice([f"https://{region_host}:443", "http://127.0.0.1:80"]), f"/{bucket}"
    if choice == 6:
        return f"https://{bucket}.{region_host}:{rng.choice([8443, 9443])}", ""
    if choice == 7:
        return f"http://{bucket}.{region_host}", ""
    return f"https://{bucket}.{region_host}", ""


QUERY_NAMES = ["prefix", "delimiter", "max-keys", "start-after", "continuation-token", "encoding-type",
               "versionId", "partNumber", "uploadId", "x-id", "response-content-type", "a", "a-b", "a.b",
               "a1", "A", "b", "Z_z", "ü", "with space", "slash/name"]
VALUELESS = ["uploads", "delete", "acl", "tagging", "versioning", "location", "versions"]


def random_query(rng, method):
    """A raw query written in SigV4 form, or "" for none."""
    roll = rng.randrange(8)
    if roll < 3:
        return ""
    if roll == 3:
        prefix = random_text(rng, QUERY_VALUE_ALPHABET, 0, 12)
        pairs = [("list-type", "2"), ("prefix", prefix)]
        if rng.random() < 0.5:
            pairs.append(("delimiter", "/"))
        if rng.random() < 0.4:
            token = base64.b64encode(rng.randbytes(rng.randint(5, 30))).decode()
            pairs.append(("continuation-token", token))
        rng.shuffle(pairs)
        return "&".join(f"{query_encode(k)}={query_encode(v)}" for k, v in pairs)
    if roll == 4:
        # Repeated keys, out of order, and names that sort differently as "key=value" strings.
        name = rng.choice(["a", "x", "prefix"])
        pairs = [(name, random_text(rng, QUERY_VALUE_ALPHABET, 0, 6)) for _ in range(rng.randint(2, 4))]
        pairs += [(rng.choice([f"{name}-b", f"{name}.b", f"{name}1", f"{name}_b"]), "v")]
        rng.shuffle(pairs)
        return "&".join(f"{query_encode(k)}={query_encode(v)}" for k, v in pairs)
    if roll == 5:
        parts = [rng.choice(VALUELESS)]
        if rng.random() < 0.5:
            parts.append(f"{query_encode(rng.choice(QUERY_NAMES))}=")
        if rng.random() < 0.5:
            parts.append(f"x-id={rng.choice(['PutObject', 'DeleteObjects', 'GetObject'])}")
        rng.shuffle(parts)
        return "&".join(parts)
    pairs = [(rng.choice(QUERY_NAMES), random_text(rng, QUERY_VALUE_ALPHABET, 0, 10)) for _ in range(rng.randint(1, 5))]
    return "&".join(f"{query_encode(k)}={query_encode(v)}" for k, v in pairs)


def random_case(rng, name):
    roll = rng.randrange(5)
    if roll == 0:
        return name.lower()
    if roll == 1:
        return name.upper()
    if roll == 2:
        return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in name)
    return name


def spaced(rng, value):
    """The value with, sometimes, leading and trailing spaces and repeated inner spaces."""
    if rng.random() < 0.4:
        value = value.replace(" ", " " * rng.randint(2, 4))
    if rng.random() < 0.3:
        value = " " * rng.randint(1, 3) + value
    if rng.random() < 0.3:
        value = value + " " * rng.randint(1, 3)
    return value


def random_body(rng, method):
    if method not in ("PUT", "POST") or rng.random() < 0.2:
        return b""
    roll = rng.randrange(4)
    if roll == 0:
        document = {"revision": rng.randint(1, 10**6), "features": {"nëw-ünïcode": True, "price": "€5"}}
        return json.dumps(document, ensure_ascii=False).encode("utf-8")
    if roll == 1:
        return b"\xff\xfe\x00\x80\xc3(" + rng.randbytes(rng.randint(0, 40))  # not UTF-8
    if roll == 2 and rng.random() < 0.1:
        return rng.randbytes(rng.randint(2000, 5000))
    return rng.randbytes(rng.randint(1, 300))


def random_headers(rng, method, body):
    headers = []
    candidates = []
    if method in ("PUT", "POST"):
        candidates += [
            ("Content-Type", rng.choice(["application/json", "application/json; charset=utf-8",
                                         "application/octet-stream", "text/plain;  charset=\"utf-8\""])),
            ("Cache-Control", rng.choice(["public, max-age=60", "no-cache", "public,max-age=30, stale-while-revalidate=60",
                                          "max-age=0,   must-revalidate"])),
            ("Content-Encoding", rng.choice(["gzip", "br", "identity"])),
            ("x-amz-acl", rng.choice(["public-read", "private", "bucket-owner-full-control"])),
            ("x-amz-meta-revision", str(rng.randint(1, 99999))),
            ("X-Amz-Meta-Published-At", "2026-11-23T19:20:00Z"),
            ("x-amz-meta-empty", rng.choice(["", "   "])),
            ("x-amz-storage-class", "STANDARD"),
            ("Content-Disposition", "attachment; filename=\"features.json\""),
        ]
        if body:
            candidates += [
                ("x-amz-checksum-sha256", base64.b64encode(hashlib.sha256(body).digest()).decode()),
                ("Content-MD5", base64.b64encode(hashlib.md5(body).digest()).decode()),
                ("Content-Length", str(len(body))),
            ]
        if method == "PUT":
            candidates += [("If-None-Match", "*"), ("If-Match", f'"{rng.randbytes(16).hex()}"')]
    if method in ("GET", "HEAD"):
        candidates += [
            ("If-None-Match", rng.choice(["*", f'"{rng.randbytes(16).hex()}"', f'W/"{rng.randint(1, 999)}", "abc"'])),
            ("Range", f"bytes=0-{rng.randint(0, 1000)}"),
            ("Accept-Encoding", "gzip, br"),
            ("If-Modified-Since", "Mon, 23 Nov 2026 19:20:00 GMT"),
            ("x-amz-checksum-mode", "ENABLED"),
        ]
    candidates += [("x-amz-request-payer", "requester"), ("X-Amz-Expected-Bucket-Owner", "123456789012"),
                   ("x-amz-meta-note", "two  spaces   inside"), ("Accept", "*/*")]
    for name, value in rng.sample(candidates, rng.randint(0, min(len(candidates), 6))):
        headers.append([random_case(rng, name), spaced(rng, value)])
    if rng.random() < 0.2:
        # A repeated name, in another case: botocore joins the values with ",".
        name = rng.choice(["x-amz-meta-tag", "Cache-Control", "x-amz-meta-revision"])
        first = [random_case(rng, name), spaced(rng, "first value")]
        second = [random_case(rng, name), spaced(rng, rng.choice(["second", "b  c", ""]))]
        headers[rng.randint(0, len(headers)):0] = [first]
        headers.insert(rng.randint(0, len(headers)), second)
    return headers


def random_time(rng, index):
    fixed = [datetime.datetime(2026, 11, 23, 19, 20, 0), datetime.datetime(2028, 2, 29, 23, 59, 59),
             datetime.datetime(2026, 12, 31, 23, 59, 59), datetime.datetime(2030, 1, 1, 0, 0, 0),
             datetime.datetime(2015, 8, 30, 12, 36, 0)]
    if index < len(fixed):
        return fixed[index]
    start = datetime.datetime(2013, 1, 1)
    return start + datetime.timedelta(seconds=rng.randrange(int(28 * 365.25 * 86400)))


def random_credentials(rng, with_token):
    alphabet32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
    b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    access = ("ASIA" if with_token else "AKIA") + "".join(rng.choice(alphabet32) for _ in range(16))
    secret = "".join(rng.choice(b64) for _ in range(40))
    token = None
    if with_token:
        token = base64.b64encode(rng.randbytes(rng.randint(100, 300))).decode()
    return access, secret, token


class RecordingSigner(botocore.auth.S3SigV4Auth):
    """S3SigV4Auth that keeps what its own canonical_request and string_to_sign returned."""

    def canonical_request(self, request):
        self.recorded_canonical_request = super().canonical_request(request)
        return self.recorded_canonical_request

    def string_to_sign(self, request, canonical_request):
        self.recorded_string_to_sign = super().string_to_sign(request, canonical_request)
        return self.recorded_string_to_sign


def fail(message):
    print(f"sigv4_cases.py: {message}", file=sys.stderr)
    sys.exit(1)


def spec_canonical_request(method, url, headers, body):
    """The canonical request by the SigV4 specification (S3 rules), written without botocore, so
    every case shows botocore agreeing with the specification on it."""
    parts = urlsplit(url)
    path = parts.path
    if s3_encode(unquote_to_bytes(path).decode("utf-8")) != path:
        fail(f"the path of {url} is not encoded once the S3 way")
    pairs = []
    for pair in parts.query.split("&") if parts.query else []:
        name, _, value = pair.partition("=")
        pairs.append((quote(unquote_to_bytes(name), safe="~"), quote(unquote_to_bytes(value), safe="~")))
    query = "&".join(f"{n}={v}" for n, v in sorted(pairs))
    host = parts.hostname
    if host and ":" in host:
        host = f"[{host}]"
    if parts.port is not None and parts.port != {"http": 80, "https": 443}[parts.scheme]:
        host = f"{host}:{parts.port}"
    grouped = {"host": [host]}
    for name, value in headers:
        # Trimall with spaces only: no leading or trailing space, one space for a run.
        grouped.setdefault(name.lower(), []).append(" ".join(word for word in value.split(" ") if word))
    names = sorted(grouped)
    canonical_headers = "".join(f"{n}:{','.join(grouped[n])}\n" for n in names)
    payload = hashlib.sha256(body).hexdigest()
    return "\n".join([method, path, query, canonical_headers, ";".join(names), payload])


def make_case(rng, index):
    method = rng.choice(["GET", "PUT", "PUT", "HEAD", "POST", "DELETE"])
    bucket = rng.choice(BUCKETS)
    origin, bucket_path = base_url(rng, bucket)
    if method == "POST" or rng.random() < 0.08:
        key = None  # a bucket-level request (ListObjectsV2, DeleteObjects, …)
    else:
        key = random_key(rng)
    path = bucket_path + "/" + s3_encode(key) if key is not None else (bucket_path or "/")
    query = random_query(rng, method)
    if method == "POST" and not query:
        query = rng.choice(["delete", "uploads", "delete&x-id=DeleteObjects"])
    url = origin + path + (f"?{query}" if query else "")
    body = random_body(rng, method)
    headers = random_headers(rng, method, body)
    with_token = rng.random() < 0.4
    access, secret, token = random_credentials(rng, with_token)
    region = rng.choice(REGIONS)
    when = random_time(rng, index)
    timestamp = when.strftime(botocore.auth.SIGV4_TIMESTAMP)

    request = AWSRequest(method=method, url=url, data=body)
    for name, value in headers:
        request.headers[name] = value  # an HTTPMessage: assigning appends, so repeats stay
    request.context["payload_signing_enabled"] = True
    given = list(request.headers.items())
    if given != [tuple(h) for h in headers]:
        fail(f"AWSRequest did not keep the headers as given: {given} != {headers}")

    signer = RecordingSigner(Credentials(access, secret, token), "s3", region)
    with mock.patch.object(botocore.auth, "get_current_datetime", lambda *args, **kwargs: when):
        signer.add_auth(request)

    after = list(request.headers.items())
    if after[: len(given)] != given:
        fail(f"case {index}: botocore changed the given headers: {after}")
    added = [[name, value] for name, value in after[len(given):] if name != "Authorization"]
    authorization = request.headers["Authorization"]

    # Checks: the time, a signed payload, the signature, and the specification's canonical form.
    name = f"case-{index + 1:04d}"
    payload_hash = hashlib.sha256(body).hexdigest()
    if dict((n, v) for n, v in added).get("X-Amz-Content-SHA256") != payload_hash:
        fail(f"{name}: the payload is not signed: {added}")
    if dict((n, v) for n, v in added).get("X-Amz-Date") != timestamp:
        fail(f"{name}: the clock was not fixed: {added}")
    key_date = hmac.new(f"AWS4{secret}".encode(), timestamp[:8].encode(), hashlib.sha256).digest()
    signing_key = key_date
    for part in (region, "s3", "aws4_request"):
        signing_key = hmac.new(signing_key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(signing_key, signer.recorded_string_to_sign.encode(), hashlib.sha256).hexdigest()
    if not authorization.endswith(f"Signature={signature}"):
        fail(f"{name}: the Authorization header does not hold the signature of the string to sign")
    spec_headers = headers + added
    expected_canonical = spec_canonical_request(method, url, spec_headers, body)
    if expected_canonical != signer.recorded_canonical_request:
        fail(f"{name}: botocore's canonical request differs from the specification's:\n"
             f"{signer.recorded_canonical_request}\n---\n{expected_canonical}")

    return {
        "name": name,
        "method": method,
        "url": url,
        "headers": headers,
        "bodyBase64": base64.b64encode(body).decode("ascii"),
        "accessKeyID": access,
        "secretAccessKey": secret,
        "sessionToken": token,
        "region": region,
        "service": "s3",
        "time": timestamp,
        "expected": {
            "canonicalRequest": signer.recorded_canonical_request,
            "stringToSign": signer.recorded_string_to_sign,
            "authorization": authorization,
            "addedHeaders": added,
        },
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT)
    arguments = parser.parse_args()
    rng = Random(arguments.seed)
    cases = [make_case(rng, index) for index in range(arguments.count)]
    fixture = {"generator": f"botocore {botocore.__version__} S3SigV4Auth", "seed": arguments.seed, "cases": cases}
    sys.stdout.write(json.dumps(fixture, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
