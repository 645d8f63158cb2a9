"""Refusals: a real status and `{"error": {"code": N, "message": "…"}}` (§10, §12 MUST 2 and 7).

    python3 errors.py --origin URL --key ADMIN --delivery-key PROD --staging-key STAGING

Malformed bodies (400), keys (401 without or with an unknown key, 403 with another
environment's), bodies of 2 MiB (413), an unknown tenant (404), on both endpoints and both
apiEndpoint forms; never a 2xx with a partial body, never a 3xx.
"""

import json

from bucketeer_common import Parts, decode_error, decode_evaluations, decode_events_answer, parse_options, post

PRODUCTION = "/t/demo/production"
STAGING = "/t/demo/staging"


def evaluations_body(user="bk-ivan"):
    return {
        "sdkVersion": "2.2.1", "sourceId": 2, "tag": "", "user": {"data": {}, "id": user},
        "userEvaluationCondition": {"evaluatedAt": "0", "userAttributesUpdated": False}, "userEvaluationsId": "",
    }


EVENTS_BODY = {"sdkVersion": "2.2.1", "sourceId": 2, "events": []}


class Run:
    def __init__(self, options):
        self.options = options
        self.origin = options.origin

    def call(self, path, key, body=None, raw=None):
        headers = {} if key is None else {"Authorization": key}
        return post(self.origin, path, body=body, raw=raw, headers=headers)

    def malformed(self):
        cases = [
            (b"{bad", "not JSON"),
            (b"", "an empty body"),
            (b"[]", "an array"),
            (b'{"user": {"id": ""}, "tag": ""}', "an empty user id"),
        ]
        checked = 0
        for base in [PRODUCTION, ""]:
            for raw, what in cases:
                exchange = self.call(f"{base}/get_evaluations", self.options.delivery_key, raw=raw)
                decode_error(exchange, 400)
                checked += 1
            for raw in [b"{bad", b"", b"[]", b'{"events": {}}']:
                exchange = self.call(f"{base}/register_events", self.options.delivery_key, raw=raw)
                decode_error(exchange, 400)
                checked += 1
        return f"{checked} malformed bodies: 400 with the error shape"

    def keys(self):
        body = evaluations_body()
        production, staging = self.options.delivery_key, self.options.staging_key
        unknown = "fp_" + "0" * 48
        cases = [
            # The private environment: a key of its own, nothing else.
            (f"{STAGING}/get_evaluations", None, body, (401,)),
            (f"{STAGING}/get_evaluations", unknown, body, (401,)),
            (f"{STAGING}/get_evaluations", "not-a-key", body, (401,)),
            (f"{STAGING}/get_evaluations", production, body, (403,)),
            # Events always need a key of the environment.
            (f"{PRODUCTION}/register_events", None, EVENTS_BODY, (401,)),
            (f"{PRODUCTION}/register_events", unknown, EVENTS_BODY, (401,)),
            (f"{PRODUCTION}/register_events", staging, EVENTS_BODY, (401, 403)),
            (f"{STAGING}/register_events", production, EVENTS_BODY, (401, 403)),
            # The host's root needs a key scoped to one environment.
            ("/get_evaluations", unknown, body, (401,)),
            ("/get_evaluations", None, body, (401,)),
            ("/register_events", unknown, EVENTS_BODY, (401,)),
        ]
        for path, key, sent, statuses in cases:
            decode_error(self.call(path, key, body=sent), *statuses)
        # And what they refuse, they take with the right key.
        decode_evaluations(self.call(f"{STAGING}/get_evaluations", staging, body=body), body["user"]["id"])
        decode_events_answer(self.call(f"{STAGING}/register_events", staging, body=EVENTS_BODY), set())
        decode_events_answer(self.call("/register_events", production, body=EVENTS_BODY), set())
        return f"{len(cases)} refusals (401 without or with an unknown key, 403 with another environment's)"

    def too_large(self):
        size = 2 * 1024 * 1024
        for path, body in [
            (f"{PRODUCTION}/get_evaluations", evaluations_body()),
            ("/get_evaluations", evaluations_body()),
            (f"{PRODUCTION}/register_events", EVENTS_BODY),
            ("/register_events", EVENTS_BODY),
        ]:
            text = json.dumps(body)
            raw = (text[:-1] + ', "padding": "' + "x" * (size - len(text) - 15) + '"}').encode()
            decode_error(self.call(path, self.options.delivery_key, raw=raw), 413)
        return "2 MiB bodies: 413 on both endpoints and at the host root"

    def unknown_places(self):
        for path in ["/t/nobody/production/get_evaluations", "/t/demo/nowhere/get_evaluations", "/t/nobody/production/register_events"]:
            exchange = self.call(path, self.options.delivery_key, body=evaluations_body())
            decode_error(exchange, 401, 403, 404)
        return "an unknown tenant or environment: a 4xx with the error shape"


def main():
    options = parse_options()
    run = Run(options)
    parts = Parts("errors.py")
    parts.run("malformed bodies", run.malformed)
    parts.run("keys", run.keys)
    parts.run("bodies of 2 MiB", run.too_large)
    parts.run("unknown tenant or environment", run.unknown_places)
    parts.exit()


if __name__ == "__main__":
    main()
