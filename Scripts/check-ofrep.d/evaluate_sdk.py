"""Part 1: every demo flag through the real OpenFeature Python SDK and its OFREP provider.

    python3 evaluate_sdk.py --origin http://HOST:PORT --key fp_… --delivery-key fp_… --binary PATH --db FILE

Each flag is asked for with each of the five value types, for users the demo recorded and users
new to the store, and the value, variant, reason and metadata are checked against the contract;
a user's A/B variation must be the group their pinned features.json gives them, whichever of the
two is asked first. The private environment is asked with `X-API-Key` and with
`Authorization: Bearer`, and the host root with a delivery key scoped to production.

What the provider (openfeature-provider-ofrep 0.3) does, read from its source, where it reads
the spec differently from a strict reading of it (the provider is the judge here):

- It joins the flag key into the URL unescaped (`urljoin(…, f"evaluate/flags/{flag_key}")`);
  requests then escapes spaces and non-ASCII, but a `/` stays a path separator (and `?`, `#`
  would start a query or fragment). So "Example A/B Test" asked by its name reaches
  `…/flags/Example%20A/B%20Test`, which is no flag (checked below: FLAG_NOT_FOUND). An app must
  hand the provider such a key already escaped; this check does so for keys with `/ ? # %`.
- It reads `variant` with `data["variant"]`: an answer without one raises KeyError and the SDK
  returns the default with GENERAL. The spec makes `variant` optional; the server must send it.
- On an error status it reads `errorDetails` with `data["errorDetails"]` (optional in the spec).
- It maps 401 and 403 to GENERAL ("unauthorized", "forbidden") and any 404 to FLAG_NOT_FOUND,
  whatever the body says.
- It parses `Retry-After` as integer seconds or an HTTP-date only; the spec's ISO 8601 example
  would raise inside the provider.
- It sends `{"context": {...}}` with `targetingKey` only when the context has one; the spec's
  schema requires `targetingKey`, the provider does not.
- Type checks are Python `isinstance`: a JSON `2` is an int and fails a float evaluation (so a
  float must be written `2.0`), and `bool` is a subclass of `int`, so an integer evaluation of a
  boolean flag succeeds with `True`/`False` (accepted below as the SDK's answer, not an error).
"""

import argparse
import json
import os
import subprocess
import tempfile

from openfeature import api
from openfeature.contrib.provider.ofrep import OFREPProvider
from openfeature.evaluation_context import EvaluationContext
from openfeature.exception import ErrorCode

from ofrep_common import (
    ALL_FLAGS,
    CONFIGS,
    PRIVATE_ENV,
    PUBLIC_ENV,
    TESTS,
    TYPES,
    CheckFailed,
    Client,
    check_metadata,
    check_value_type,
    client_group,
    encoded,
    env_base,
    expect,
    expect_equal,
    expected_answer,
    fetch_pinned,
    run,
)

DEFAULTS = {
    "boolean": False,
    "string": "check-ofrep default",
    "integer": -1,
    "float": -1.5,
    "object": {"checkOfrepDefault": True},
}
RECORDED_USERS = ["demo-user-7", "demo-user-1", "demo-user-4242", "demo-user-10000"]
NEW_USERS = ["ofrep-new-user-1", "ofrep new user 2", "ofrep-nëw-üser-3"]
UNLOCKED_USER = "ofrep-unlocked-user"


def sdk_key(name):
    """The key as the provider must be given it: escaped when it holds a byte it would misplace."""
    return encoded(name) if any(character in name for character in "/?#%") else name


def evaluate(client, flag_type, name, context):
    method = getattr(client, f"get_{flag_type}_details")
    return method(sdk_key(name), DEFAULTS[flag_type], context)


def check_details(details, name, flag_type, expected, revision, where):
    """One SDK answer: the contract's when the type matches, else TYPE_MISMATCH and the default."""
    where = f"{where}: {name!r} as {flag_type}"
    matches = flag_type == expected.type or (flag_type == "integer" and expected.type == "boolean")
    if not matches:
        expect_equal(details.error_code, ErrorCode.TYPE_MISMATCH, f"{where}: error code (the flag is a {expected.type})")
        expect_equal(details.value, DEFAULTS[flag_type], f"{where}: the default value on TYPE_MISMATCH")
        return
    expect(
        details.error_code is None,
        f"{where}: expected {expected}, got error {details.error_code} ({details.error_message})",
    )
    if flag_type == expected.type:
        check_value_type(details.value, flag_type, where)
    expect_equal(details.value, expected.value, f"{where}: value")
    expect_equal(details.variant, expected.variant, f"{where}: variant")
    expect_equal(str(details.reason), expected.reason, f"{where}: reason")
    check_metadata(dict(details.flag_metadata), expected, revision, where)


class Part:
    def __init__(self, options):
        self.options = options
        self.public = Client(options.origin)
        self.private = Client(options.origin, {"Authorization": f"Bearer {options.key}"})
        self.evaluations = 0
        self.agreements = 0
        base = options.origin.rstrip("/")
        providers = {
            "production": OFREPProvider(f"{base}{env_base(PUBLIC_ENV)}"),
            "staging-api-key": OFREPProvider(
                f"{base}{env_base(PRIVATE_ENV)}", headers_factory=lambda: {"X-API-Key": options.key}
            ),
            "staging-bearer": OFREPProvider(
                f"{base}{env_base(PRIVATE_ENV)}", headers_factory=lambda: {"Authorization": f"Bearer {options.key}"}
            ),
            "staging-anonymous": OFREPProvider(f"{base}{env_base(PRIVATE_ENV)}"),
            "root-delivery": OFREPProvider(
                base, headers_factory=lambda: {"Authorization": f"Bearer {options.delivery_key}"}
            ),
        }
        self.clients = {}
        for domain, provider in providers.items():
            api.set_provider(provider, domain=domain)
            self.clients[domain] = api.get_client(domain=domain)

    def user(self, domain, env, pinned_client, user, *, ofrep_first, types=TYPES):
        """Every flag with `types` for `user`; the pinned document before or after."""
        if not ofrep_first:
            pinned, configs, revision = fetch_pinned(pinned_client, env, user)
        client = self.clients[domain]
        contexts = [EvaluationContext(targeting_key=user)]
        answers = []
        for name in ALL_FLAGS:
            for flag_type in types:
                answers.append((name, flag_type, {}, evaluate(client, flag_type, name, contexts[0])))
        development = EvaluationContext(targeting_key=user, attributes={"development": True})
        answers.append(
            ("Example Development Flag", "boolean", {"development": True},
             evaluate(client, "boolean", "Example Development Flag", development))
        )
        if ofrep_first:
            pinned, configs, revision = fetch_pinned(pinned_client, env, user)
        where = f"{domain}{'' if domain == env else f' ({env})'}, user {user!r}"
        for name, flag_type, context, details in answers:
            expected = expected_answer(name, pinned, context)
            check_details(details, name, flag_type, expected, revision, where + (f", context {context}" if context else ""))
            self.evaluations += 1
        # One user, one group: the variation OFREP gave is the pinned document's, and the configs
        # the user's configs.json holds are the values OFREP gave.
        for name in TESTS:
            group, _ = client_group(pinned[name])
            given = next(d for n, t, c, d in answers if n == name and t in ("string", "boolean") and not c and d.error_code is None)
            expect_equal(given.variant, group, f"{where}: {name!r}: OFREP's variation against the pinned features.json's group")
            self.agreements += 1
        for name in CONFIGS:
            flag_type = CONFIGS[name][0]
            given = next(d for n, t, c, d in answers if n == name and t == flag_type)
            expect(name in configs, f"{where}: configs.json?user= has no {name!r}: {configs!r}")
            expect(
                configs[name] == given.value and isinstance(configs[name], bool) == isinstance(given.value, bool),
                f"{where}: {name!r}: OFREP gave {given.value!r}, the user's configs.json has {configs[name]!r}",
            )
            self.agreements += 1

    def without_targeting_key(self):
        client = self.clients["production"]
        anonymous = EvaluationContext()
        details = client.get_boolean_details("Example Feature Flag", False, anonymous)
        expect(
            details.error_code is None and details.value is True and str(details.reason) == "STATIC",
            f"production: 'Example Feature Flag' without a targetingKey: expected true STATIC (a plain flag needs no user), "
            f"got {details.value!r} {details.reason} {details.error_code} {details.error_message}",
        )
        for name in TESTS:
            flag_type = "boolean" if name == "New Onboarding" else "string"
            details = evaluate(client, flag_type, name, anonymous)
            expect_equal(details.error_code, ErrorCode.TARGETING_KEY_MISSING, f"production: {name!r} without a targetingKey: error code")
            expect_equal(details.value, DEFAULTS[flag_type], f"production: {name!r} without a targetingKey: value")
        user = EvaluationContext(targeting_key="demo-user-7")
        for name in ["No Such Flag", "Größentabelle"]:
            details = client.get_boolean_details(name, False, user)
            expect_equal(details.error_code, ErrorCode.FLAG_NOT_FOUND, f"production: unknown flag {name!r}: error code")
        # The provider does not escape keys: by its bare name, "Example A/B Test" is a path
        # with one more segment, which is no flag (see the module's notes).
        details = client.get_string_details("Example A/B Test", "unescaped", user)
        expect_equal(
            details.error_code, ErrorCode.FLAG_NOT_FOUND,
            "production: 'Example A/B Test' given to the provider unescaped (…/flags/Example%20A/B%20Test): error code",
        )

    def private_environment(self):
        for domain in ["staging-api-key", "staging-bearer"]:
            for user, ofrep_first in [("demo-user-7", True), ("ofrep-staging-user-1", False)]:
                self.user(domain, PRIVATE_ENV, self.private, user, ofrep_first=ofrep_first)
        details = self.clients["staging-anonymous"].get_boolean_details(
            "Example Feature Flag", False, EvaluationContext(targeting_key="demo-user-7")
        )
        expect(
            details.error_code == ErrorCode.GENERAL and details.error_message == "unauthorized",
            f"staging without a key: expected the provider's GENERAL 'unauthorized' (the server's 401), "
            f"got {details.error_code} {details.error_message!r} value {details.value!r}",
        )

    def flagpole(self, *arguments):
        command = [self.options.binary, *arguments, "--tenant", "demo", "--db", self.options.db]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise CheckFailed(f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
        return result.stdout

    def targeting(self):
        """A rule through the SDK: attributes in the evaluation context decide, the answer says
        TARGETING_MATCH and names the rule in its metadata, and the user's pinned features.json
        (fetched with no attributes) puts the app in the same group; others keep their SPLIT."""
        rules = {"rules": [{"id": "germany", "clauses": [{"attribute": "country", "operator": "equals", "values": ["DE"]}],
                            "serve": {"variation": "Group B"}}]}
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as file:
            json.dump(rules, file)
        try:
            self.flagpole("rule", "set", "Example A/B Test", "--file", file.name)
        finally:
            os.unlink(file.name)
        client = self.clients["production"]
        name = "Example A/B Test"
        checked = 0
        for index in range(20):
            for country in ["DE", "FR"]:
                user = f"ofrep-targeted-{country}-{index}"
                context = EvaluationContext(targeting_key=user, attributes={"country": country, "appVersion": "5.2.1"})
                details = evaluate(client, "string", name, context)
                where = f"production, user {user!r} with country {country}: {name!r}"
                expect(details.error_code is None, f"{where}: error {details.error_code} {details.error_message}")
                pinned, _, _ = fetch_pinned(self.public, PUBLIC_ENV, user)
                group, _ = client_group(pinned[name])
                expect_equal(details.variant, group, f"{where}: OFREP's variation against the pinned features.json's group")
                if country == "DE":
                    expect_equal(details.variant, "Group B", f"{where}: variant")
                    expect_equal(str(details.reason), "TARGETING_MATCH", f"{where}: reason")
                    expect_equal(dict(details.flag_metadata).get("rule"), "germany", f"{where}: metadata.rule")
                else:
                    expect_equal(str(details.reason), "SPLIT", f"{where}: reason")
                    expect("rule" not in dict(details.flag_metadata), f"{where}: no rule decided, yet metadata {dict(details.flag_metadata)}")
                checked += 1
        self.flagpole("rule", "set", name, "--clear")
        self.targeted = checked

    def unlock(self):
        command = [
            self.options.binary, "unlock", "Example Unlock Flag", "--user", UNLOCKED_USER,
            "--tenant", "demo", "--db", self.options.db,
        ]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise CheckFailed(f"{' '.join(command)} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
        pinned, _, revision = fetch_pinned(self.public, PUBLIC_ENV, UNLOCKED_USER)
        expect(pinned["Example Unlock Flag"].get("unlocked") is True, f"the pinned document of {UNLOCKED_USER} is not unlocked: {pinned['Example Unlock Flag']}")
        self.user("production", PUBLIC_ENV, self.public, UNLOCKED_USER, ofrep_first=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--origin", required=True)
    parser.add_argument("--key", required=True, help="a key of the demo tenant (admin)")
    parser.add_argument("--delivery-key", required=True, help="a delivery key scoped to demo/production")
    parser.add_argument("--binary", required=True)
    parser.add_argument("--db", required=True)
    options = parser.parse_args()
    part = Part(options)
    for index, user in enumerate(RECORDED_USERS + NEW_USERS):
        part.user("production", PUBLIC_ENV, part.public, user, ofrep_first=index % 2 == 1)
    part.without_targeting_key()
    part.unlock()
    part.private_environment()
    for user, ofrep_first in [("demo-user-7", False), ("ofrep-root-user-1", True)]:
        part.user("root-delivery", PUBLIC_ENV, part.public, user, ofrep_first=ofrep_first)
    part.targeting()
    print(
        f"check-ofrep: SDK: {part.evaluations} evaluations of the {len(ALL_FLAGS)} demo flags as "
        f"{', '.join(TYPES)} (production, staging by X-API-Key and Bearer, host root by delivery key), "
        f"recorded and new users: values, variants, reasons and metadata as the contract says; "
        f"{part.agreements} agreements with the pinned features.json and configs.json; "
        f"{part.targeted} users under a rule, decided by their context's attributes, agreeing with their pinned features.json"
    )


if __name__ == "__main__":
    run("SDK", main)
