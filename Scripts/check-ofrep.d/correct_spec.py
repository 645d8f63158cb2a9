"""Writes the corrected copy of the OFREP spec that schemathesis validates against.

    python3 correct_spec.py ofrep-openapi.yaml OUT.json

`ofrep-openapi.yaml` beside this file is the official document, byte for byte (README.md says
where from); it is never edited. Under strict JSON Schema it contradicts itself, and one header
is declared in a form HTTP does not allow, so a validator run against it as published rejects
correct answers. This script applies the four corrections the project's spec notes list, each
one checked against what it replaces, so a different upstream copy fails here rather than being
patched blindly:

1. `codeDefaultFlag` declares no required property, so it matches every success body and
   `oneOf` in `evaluationSuccess` can never match exactly one: it must forbid `value`.
2. An integer value matches both `integerFlag` and `floatFlag`: `floatFlag`'s value must not be
   an integer. (JSON Schema counts 2.0 as an integer, so a float written `2.0` validates as an
   integerFlag; the SDK part checks that such a value reaches Python as a float.)
3. The bulk example's `FLAG_NOT_FOUND` item is outside `evaluationFailure`'s error-code enum.
4. The single-flag 429's `Retry-After` is an ISO 8601 date-time, which RFC 9110 does not allow
   (an HTTP-date or a number of seconds) and the providers can't parse: integer seconds.
"""

import hashlib
import json
import sys

import yaml

# The official document's SHA-256, as published at the pinned commit of open-feature/protocol
# (check-ofrep.d/README.md): the copy must be that file.
OFFICIAL_SHA256 = "e5f560c5194ce5f0c077685a734ecbf5d4baa3311cf862c69b636938e1fdd056"


def fail(message):
    print(f"correct_spec.py: {message}", file=sys.stderr)
    sys.exit(1)


def correct(spec):
    schemas = spec["components"]["schemas"]

    code_default = schemas["codeDefaultFlag"]
    if code_default.get("properties") != {} or "not" in code_default:
        fail(f"codeDefaultFlag is no longer the empty object schema this corrects: {code_default}")
    code_default["not"] = {"required": ["value"]}

    float_value = schemas["floatFlag"]["properties"]["value"]
    if float_value != {"type": "number", "format": "float"}:
        fail(f"floatFlag's value is no longer {{type: number, format: float}}: {float_value}")
    float_value["not"] = {"type": "integer"}

    error_codes = schemas["evaluationFailure"]["properties"]["errorCode"]["enum"]
    if "FLAG_NOT_FOUND" in error_codes:
        fail(f"evaluationFailure's errorCode enum already has FLAG_NOT_FOUND: {error_codes}")
    error_codes.append("FLAG_NOT_FOUND")

    single = spec["paths"]["/ofrep/v1/evaluate/flags/{key}"]["post"]["responses"]
    retry_after = single["429"]["headers"]["Retry-After"]
    if retry_after["schema"].get("format") != "date-time":
        fail(f"the single-flag 429's Retry-After is no longer a date-time: {retry_after}")
    retry_after["schema"] = {"type": "integer", "minimum": 0}
    retry_after["description"] = "The number of seconds to wait before retrying (RFC 9110 §10.2.3)."
    return spec


def main():
    if len(sys.argv) != 3:
        fail("usage: correct_spec.py ofrep-openapi.yaml OUT.json")
    source, output = sys.argv[1:]
    with open(source, "rb") as file:
        data = file.read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != OFFICIAL_SHA256:
        fail(
            f"{source} is not the official OFREP document (SHA-256 {digest}, expected {OFFICIAL_SHA256}): "
            "copy it again byte for byte instead of editing it"
        )
    spec = correct(yaml.safe_load(data))
    with open(output, "w", encoding="utf-8") as file:
        json.dump(spec, file, indent=2, default=str)
        file.write("\n")


if __name__ == "__main__":
    main()
