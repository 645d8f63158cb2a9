"""S3 helpers for check-publish: moto in this process, a boto3 client, reading back what
`flagpole publish` wrote, and turning on moto's signature checks.

    server, endpoint = start_moto()          # http://127.0.0.1:PORT, any free port
    s3 = client(endpoint)                    # path-style, us-east-1, testing/testing
    s3.create_bucket(Bucket="flagpole")
    access, secret = signed_credentials(endpoint)   # from here on moto checks every signature
    stop_checking_signatures(endpoint); check_signatures(endpoint)   # off, and on again
    ...
    server.stop()

What moto 5.2 does (read from its source and tried):

- Signatures are not checked until told: `settings.INITIAL_NO_AUTH_ACTION_COUNT` (environment
  INITIAL_NO_AUTH_ACTION_COUNT, read once when moto is imported; infinite by default) is the
  number of requests served before checks begin. `POST /moto-api/reset-auth` with a number as
  the body sets it at run time and restarts the count, so nothing need be set before moto
  starts: signed_credentials() makes an IAM user with an access key and an allow-all policy
  through moto's IAM (the same server), then posts 0 there. After that, each request is signed
  again by moto with botocore's S3SigV4Auth over the headers the request's SignedHeaders names,
  and a different signature is 403 SignatureDoesNotMatch; an unknown key is 403
  InvalidAccessKeyId. Checks apply to the whole moto process until stop_checking_signatures().
  moto checks the decoded path unless start_moto() patched it (check_signatures_on_raw_paths).
- x-amz-checksum-sha256 is never verified: a wrong one is stored and answered back as given.
- PUT with If-None-Match: * on an existing key is 412 PreconditionFailed; on a new key, 200.
- GET answers Content-Type, Content-Encoding, Cache-Control and x-amz-meta-* as they were put.
- GET with If-None-Match equal to the ETag (quoted or not; no lists, no W/, no *) is 304
  without content-* headers.
- Anonymous (unsigned) GETs of a private object are 403, so conditional_get() signs its GET.
"""

import http.client
import json
import logging
import socket
from urllib.parse import urlsplit

import boto3
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials

REGION = "us-east-1"
DUMMY_ACCESS_KEY = "testing"
DUMMY_SECRET = "testing"
ALLOW_ALL = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]})


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def check_signatures_on_raw_paths():
    """Makes moto's signature check use the request target as sent, as S3 does (this process).

    moto 5.2 re-signs the URL werkzeug rebuilt from the decoded path and query (it checks
    `/b/a%20b+c=d&e` for `/b/a%20b%2Bc%3Dd%26e`, `/b/ü` for `/b/%C3%BC`, `prefix=a/` for
    `prefix=a%2F`), so with checks on, every correctly signed request whose key or query needs
    %XX is 403 SignatureDoesNotMatch, boto3's own included. This wraps the one method that builds the check
    so it reads the raw target (werkzeug's RAW_URI) for the duration of the check only."""
    from moto.core.authorization import ActionAuthenticatorMixin

    original = ActionAuthenticatorMixin._authenticate_and_authorize_action
    if getattr(original, "flagpole_raw_uri", False):
        return

    def authenticate_on_raw_uri(self, iam_request_cls, resource="*"):
        import flask

        raw = flask.request.environ.get("RAW_URI") if flask.has_request_context() else None
        if not raw:
            return original(self, iam_request_cls, resource)
        decoded, self.uri = self.uri, raw
        try:
            return original(self, iam_request_cls, resource)
        finally:
            self.uri = decoded

    authenticate_on_raw_uri.flagpole_raw_uri = True
    ActionAuthenticatorMixin._authenticate_and_authorize_action = authenticate_on_raw_uri


def start_moto(port=0, quiet=True, raw_signature_paths=True):
    """Starts moto's server in this process on 127.0.0.1; returns (server, endpoint URL).
    With raw_signature_paths, signatures (once signed_credentials() turns checks on) are checked
    on the path and query as sent: see check_signatures_on_raw_paths()."""
    from moto.server import ThreadedMotoServer

    if raw_signature_paths:
        check_signatures_on_raw_paths()
    if quiet:
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    host, bound = server.get_host_and_port()
    return server, f"http://{host}:{bound}"


def client(endpoint, access_key=DUMMY_ACCESS_KEY, secret=DUMMY_SECRET, retries=0):
    """A boto3 S3 client for the endpoint: path-style addressing, us-east-1."""
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=access_key,
        aws_secret_access_key=secret,
        config=Config(s3={"addressing_style": "path"}, retries={"total_max_attempts": retries + 1}),
    )


def read_back(s3, bucket, key):
    """What a GET of the object answers: body bytes, content headers, metadata and ETag."""
    answer = s3.get_object(Bucket=bucket, Key=key)
    return {
        "Body": answer["Body"].read(),
        "ContentType": answer.get("ContentType"),
        "ContentEncoding": answer.get("ContentEncoding"),
        "CacheControl": answer.get("CacheControl"),
        "Metadata": answer.get("Metadata", {}),
        "ETag": answer.get("ETag"),
    }


def signed_request(endpoint, method, path, headers=(), body=b"", access_key=DUMMY_ACCESS_KEY,
                   secret=DUMMY_SECRET, region=REGION):
    """Sends one request signed by botocore's S3SigV4Auth, with the path exactly as given (already
    encoded, never normalised); returns (status, headers as a list, body bytes)."""
    url = endpoint.rstrip("/") + path
    request = AWSRequest(method=method, url=url, data=body)
    for name, value in headers:
        request.headers[name] = value
    S3SigV4Auth(Credentials(access_key, secret), "s3", region).add_auth(request)
    parts = urlsplit(endpoint)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.putrequest(method, path, skip_accept_encoding=True)
        for name, value in request.headers.items():
            connection.putheader(name, value)
        if body or method in ("PUT", "POST"):
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body or None)
        response = connection.getresponse()
        return response.status, response.getheaders(), response.read()
    finally:
        connection.close()


def conditional_get(endpoint, bucket, key, etag, access_key=DUMMY_ACCESS_KEY, secret=DUMMY_SECRET):
    """The status of a signed GET of the object with If-None-Match: ETAG (304 when it matches).
    `key` is the object key, encoded here the S3 way."""
    from urllib.parse import quote

    path = f"/{bucket}/{quote(key.encode('utf-8'), safe='/~')}"
    status, _, _ = signed_request(endpoint, "GET", path, [("If-None-Match", etag)],
                                  access_key=access_key, secret=secret)
    return status


def _reset_auth(endpoint, count):
    parts = urlsplit(endpoint)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    try:
        connection.request("POST", "/moto-api/reset-auth", body=str(count).encode())
        response = connection.getresponse()
        answer = response.read()
        if response.status != 200:
            raise RuntimeError(f"POST /moto-api/reset-auth answered {response.status}: {answer!r}")
    finally:
        connection.close()


def signed_credentials(endpoint, user="flagpole-publish"):
    """A real (access key, secret) pair made through moto's IAM, allowed everything; from this
    call on, moto checks every request's signature (a wrong secret: 403 SignatureDoesNotMatch).
    Make buckets before calling it, or with the returned pair after. Nothing need be set in the
    environment before moto starts."""
    iam = boto3.client("iam", endpoint_url=endpoint, region_name=REGION,
                       aws_access_key_id=DUMMY_ACCESS_KEY, aws_secret_access_key=DUMMY_SECRET)
    iam.create_user(UserName=user)
    iam.put_user_policy(UserName=user, PolicyName="allow-all", PolicyDocument=ALLOW_ALL)
    key = iam.create_access_key(UserName=user)["AccessKey"]
    _reset_auth(endpoint, 0)
    return key["AccessKeyId"], key["SecretAccessKey"]


def check_signatures(endpoint):
    """Turns moto's signature checks on (again) for every request from now on: use the pair
    signed_credentials() made, which works whether checks are on or off."""
    _reset_auth(endpoint, 0)


def stop_checking_signatures(endpoint):
    """Back to moto's default: no signature checks (any credentials)."""
    _reset_auth(endpoint, "inf")
