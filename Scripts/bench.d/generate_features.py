#!/usr/bin/env python3
"""Writes a deterministic features.json for Scripts/bench.

usage: generate_features.py COUNT OUTPUT [SEED]

The mix follows the kinds of FORMAT.md §3 in roughly the proportions a large app's
file has: mostly plain flags, then tests. Every feature is valid and clean (no
warnings), so the benchmark times the import path itself rather than diagnostics.
The same COUNT and SEED always give the same bytes.
"""
import json
import random
import sys

SECTIONS = [
    "Onboarding", "Checkout", "Search", "Profile", "Settings", "Payments", "Feed",
    "Notifications", "Messaging", "Maps", "Media", "Accessibility", "Remote Config",
    "QA", "Development", "Growth", "Retention", "Ads", "Widgets", "Login",
]
WORDS = [
    "new", "improved", "compact", "dark", "express", "smart", "instant", "guided",
    "social", "offline", "secure", "adaptive", "rich", "quick", "shared", "custom",
    "banner", "carousel", "sheet", "toolbar", "layout", "flow", "button", "picker",
    "reminder", "badge", "tooltip", "search", "filter", "upsell", "paywall", "tab",
]
GROUP_NAMES = ["Control", "Group A", "Group B", "Group C", "Group D", "Group E", "Variant 1",
               "Variant 2", "Blue", "Green", "Red", "Short copy", "Long copy"]


def split(rng, count):
    """Integer biases of `count` groups summing to exactly 100, none below 1."""
    cuts = sorted(rng.sample(range(1, 100), count - 1))
    bounds = [0] + cuts + [100]
    return [bounds[i + 1] - bounds[i] for i in range(count)]


def feature(rng, index):
    name = "%s_%s_%s_%05d" % (rng.choice(WORDS), rng.choice(WORDS), rng.choice(WORDS), index)
    f = {"name": name}
    if rng.random() < 0.85:
        f["description"] = "%s %s for the %s screen (ticket APP-%d)" % (
            rng.choice(WORDS).capitalize(), rng.choice(WORDS), rng.choice(SECTIONS).lower(), rng.randrange(100, 99999))
    if rng.random() < 0.7:
        f["section"] = rng.choice(SECTIONS)

    kind = rng.random()
    if kind < 0.40:                      # plain flag
        if rng.random() < 0.9:
            f["enabled"] = rng.random() < 0.6
        if rng.random() < 0.05:
            f["type"] = {"feature-flag": "remote"}
    elif kind < 0.50:                    # development flag
        f["development"] = True
        f["enabled"] = rng.random() < 0.5
    elif kind < 0.60:                    # unlock flag
        f["enabled"] = True
        f["unlocked"] = rng.random() < 0.3
    elif kind < 0.75:                    # A/B test, two arbitrary groups
        names = rng.sample(GROUP_NAMES, 2)
        f["enabled"] = True
        f["test-variations"] = names
        f["test-biases"] = split(rng, 2)
        if rng.random() < 0.6:
            f["labels"] = ["%s-%s" % (name, n.lower().replace(" ", "-")) for n in names]
    elif kind < 0.85:                    # feature on/off A/B test
        f["enabled"] = True
        f["test-variations"] = rng.choice([["Enabled", "Disabled"], ["Disabled", "Enabled"], ["enabled", "disabled"]])
        f["test-biases"] = split(rng, 2)
        if rng.random() < 0.5:
            f["labels"] = ["%s-on" % name, "%s-off" % name]
    else:                                # MVT test, 3 to 6 variations
        count = rng.randint(3, 6)
        names = rng.sample(GROUP_NAMES, count)
        f["enabled"] = True
        f["test-variations"] = names
        f["test-biases"] = split(rng, count)
        if rng.random() < 0.3:
            f["type"] = {"feature-test": "mvt"}
        if rng.random() < 0.7:
            # Some analytics labels are deliberately null (allowed by the client).
            f["labels"] = [None if rng.random() < 0.1 else "%s-%d" % (name, i) for i in range(count)]
    if rng.random() < 0.03:
        # Keys the client ignores: the store keeps them for a lossless round trip.
        f["owner"] = "team-%s" % rng.choice(WORDS)
        f["jira"] = {"ticket": "APP-%d" % rng.randrange(100, 99999), "sprint": rng.randrange(1, 60)}
    return f


def main():
    count = int(sys.argv[1])
    output = sys.argv[2]
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 20240601
    rng = random.Random(seed)
    document = {
        # Apps often add "features" to an existing config file: keep a few other top-level keys.
        "schemaVersion": 2,
        "features": [feature(rng, i) for i in range(count)],
        "generatedBy": "flagpole Scripts/bench",
    }
    with open(output, "w", encoding="utf-8") as out:
        json.dump(document, out, indent=4, ensure_ascii=False)
        out.write("\n")


if __name__ == "__main__":
    main()
