"""A realistic app's features.json, for the serve-user row of Scripts/bench: the features of
two real files from the fixtures (the FeatureFlags library's own example and an app's), twelve
in all, of which six are tests, as an app that has grown for a while has them.

usage: python3 realistic_app.py FIXTURES_DIR > app.json
"""
import json
import sys

directory = sys.argv[1]
features = []
for name in ("rwbutler-HEAD-Features.json", "vantientu1703-master-Features.json"):
    with open(f"{directory}/{name}", encoding="utf-8") as file:
        document = json.load(file)
    features += document["features"] if isinstance(document, dict) else document
seen = set()
for feature in features:
    # Both files are made from the same example: the second copy of a name gets a suffix.
    while feature["name"] in seen:
        feature["name"] += " (2)"
    seen.add(feature["name"])
json.dump({"features": features}, sys.stdout, indent=4, ensure_ascii=False)
print()
