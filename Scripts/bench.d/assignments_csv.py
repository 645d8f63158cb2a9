#!/usr/bin/env python3
"""Turns `flagpole assign --json` lines into the CSV rows of the assign baseline.

usage: assignments_csv.py ASSIGN_JSONL OUTPUT_CSV

Writes one `user,point,variation` line per assignment, the point as the shortest text that
reads back as the same double (repr), and prints the revision the users were assigned
under. Fails unless every line is of one feature and one revision and no user repeats.
"""
import csv
import json
import sys


def main():
    source, output = sys.argv[1], sys.argv[2]
    features, revisions, users = set(), set(), set()
    with open(source, encoding="utf-8") as lines, open(output, "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, lineterminator="\n")
        for line in lines:
            assignment = json.loads(line)
            features.add(assignment["feature"])
            revisions.add(assignment["revision"])
            user = assignment["user"]
            if user in users:
                sys.exit(f"assignments_csv: {user} is listed twice in {source}")
            users.add(user)
            writer.writerow((user, repr(float(assignment["point"])), assignment["variation"]))
    if len(features) != 1 or len(revisions) != 1:
        sys.exit(f"assignments_csv: expected one feature and one revision, found {sorted(features)} and {sorted(revisions)}")
    print(revisions.pop())


if __name__ == "__main__":
    main()
