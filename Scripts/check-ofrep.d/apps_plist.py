"""Part 4: what SwiftFeatureConfigs apps get, read by Python's plistlib (a strict XML reader that
shares no code with Flagpole) and json.

On a database of its own (`flagpole demo`):
- writes no app could take are refused: a JSON null inside a json config (UserDefaults refuses
  NSNull in persist()), a C0 control character in a string (XML 1.0 has no form for it), a
  number too small for a double;
- tab, line feed and carriage return are taken, and plistlib reads them back;
- a null an earlier version stored (written straight into the revision with sqlite3) is reported
  by `flagpole migrate`, and left out of the override plist and of configs.json;
- the exported plist of every config, and of a user's, parses with plistlib, holds no None, and
  agrees with configs.json value for value.
"""

import argparse
import json
import os
import plistlib
import sqlite3
import subprocess
import sys
import tempfile


def run(binary, db, *arguments, expect=0):
    result = subprocess.run([binary, *arguments, "--db", db], capture_output=True, text=True)
    if result.returncode != expect:
        sys.exit(
            f"check-ofrep: apps: `flagpole {' '.join(arguments)}` exited {result.returncode}, expected {expect}\n"
            f"stdout: {result.stdout}\nstderr: {result.stderr}")
    return result


def no_nulls(value, where):
    if value is None:
        sys.exit(f"check-ofrep: apps: a null at {where}")
    if isinstance(value, dict):
        for key, member in value.items():
            no_nulls(member, f"{where}/{key}")
    if isinstance(value, list):
        for index, element in enumerate(value):
            no_nulls(element, f"{where}/{index}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    arguments = parser.parse_args()
    binary = arguments.binary
    with tempfile.TemporaryDirectory() as work:
        db = os.path.join(work, "apps.sqlite")
        run(binary, db, "demo")
        tenant = ["--tenant", "demo"]

        refused = [
            (["nulls", "--type", "json", "--default", '{"a":{"b":[1,null]}}'], "null"),
            (["bell", "--type", "string", "--default", "ding\x07"], "U+0007"),
            (["escape", "--type", "json", "--default", '{"k":"\\u001b[0m"}'], "U+001B"),
            (["tiny", "--type", "double", "--default", "1e-400"], "too small"),
        ]
        for config, reason in refused:
            result = run(binary, db, "config", "set", *config, *tenant, expect=1)
            if reason not in result.stderr:
                sys.exit(f"check-ofrep: apps: refusing {config[0]} did not say {reason!r}: {result.stderr}")
        run(binary, db, "config", "set", "lines", "--type", "string", "--default", "a\tb\nc\rd", *tenant)

        # A null an earlier version let through, written into the newest revision.
        with sqlite3.connect(db) as connection:
            connection.execute(
                "UPDATE revisions SET configs = CAST(replace(CAST(configs AS TEXT), "
                "'\"cornerRadius\":8', '\"cornerRadius\":8,\"shadow\":null') AS BLOB) "
                "WHERE number = (SELECT max(number) FROM revisions)")
        migrate = run(binary, db, "migrate")
        if "theme" not in migrate.stderr or "served without it" not in migrate.stderr:
            sys.exit(f"check-ofrep: apps: migrate did not report the stored null: {migrate.stderr}")

        for user in [None, "demo-user-1", "plist-new-user"]:
            who = ["--user", user] if user else []
            plist_bytes = run(binary, db, "config", "export", "--format", "plist", *who, *tenant).stdout.encode()
            dictionary = json.loads(run(binary, db, "config", "export", "--format", "dictionary", *who, *tenant).stdout)
            plist = plistlib.loads(plist_bytes)
            no_nulls(plist, "plist")
            no_nulls(dictionary, "configs.json")
            if plist != dictionary:
                sys.exit(f"check-ofrep: apps: the plist and configs.json differ for {user}:\n{plist}\n{dictionary}")
            if plist["lines"] != "a\tb\nc\rd":
                sys.exit(f"check-ofrep: apps: plistlib read {plist['lines']!r} for a\\tb\\nc\\rd")
            if "shadow" in plist["theme"]:
                sys.exit("check-ofrep: apps: the stored null was served")
    print("check-ofrep: apps: nulls, control characters and underflow refused; stored nulls reported and left out; "
          "plistlib reads every plist and it agrees with configs.json")


if __name__ == "__main__":
    main()
