"""Experiment results against independent implementations, through the real binary and server.

1. Generates users of the demo's A/B and multivariate tests with known effects on three goals
   (a conversion, a value, a count where lower is better), and exposures for the multivariate
   test, some events before them (which must not count) and after.
2. Sends every batch twice, shuffled, from two processes at once: each event must count once.
3. Compares every figure of `flagpole results --json` with scipy and statsmodels computed from
   the per-user totals: 1e-9 relative, or 1e-12 absolute for p-values under 1e-3.
4. The sample-ratio check flags a population skewed the way a crashing client skews it, and not a
   fair one.
"""

import argparse
import datetime
import json
import math
import multiprocessing
import os
import random
import subprocess
import sys
import urllib.request

import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportions_ztest

Z = stats.norm.ppf(0.975)
failures = []
compared = [0]


def expect(condition, message):
    if not condition:
        failures.append(message)


def close(label, ours, theirs):
    """1e-9 relative, or 1e-12 absolute where both are tiny (p-values under 1e-3)."""
    if ours is None or theirs is None:
        expect(ours is None and theirs is None, f"{label}: ours {ours}, theirs {theirs}")
        return
    compared[0] += 1
    tolerance = max(1e-9 * abs(theirs), 1e-12 if abs(theirs) < 1e-3 else 0)
    expect(abs(ours - theirs) <= tolerance, f"{label}: ours {ours!r}, scipy/statsmodels {theirs!r}")


def run(binary, db, *args):
    return subprocess.run([binary, *args, "--db", db], check=True, capture_output=True, text=True).stdout


def assign(binary, db, feature, users):
    path = db + ".users"
    with open(path, "w") as f:
        f.write("\n".join(users) + "\n")
    out = run(binary, db, "assign", "--feature", feature, "--users-file", path, "--tenant", "demo", "--json")
    return {o["user"]: o["variation"] for o in map(json.loads, out.splitlines()) if "variation" in o}


def post(args):
    base, key, batches, seed = args
    rng = random.Random(seed)
    order = batches * 2
    rng.shuffle(order)
    accepted = duplicates = 0
    for batch in order:
        request = urllib.request.Request(
            f"{base}/t/demo/production/events", data=json.dumps({"events": batch}).encode(), method="POST",
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
        with urllib.request.urlopen(request) as response:
            report = json.load(response)
        assert not report["refused"], report["refused"][:3]
        accepted += report["accepted"]
        duplicates += report["duplicates"]
    return accepted, duplicates


def iso(t):
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).isoformat()


def reference(goal_kind, better, control_totals, variation_totals):
    """Every figure of one comparison, by scipy and statsmodels from the per-user totals."""
    c = np.asarray(control_totals, dtype=float)
    t = np.asarray(variation_totals, dtype=float)
    nt, nc = len(t), len(c)
    mt, mc = t.mean(), c.mean()
    if goal_kind == "conversion":
        vt, vc = mt * (1 - mt), mc * (1 - mc)
        _, p = proportions_ztest([t.sum(), c.sum()], [nt, nc])
        df = None
    else:
        vt, vc = t.var(ddof=1), c.var(ddof=1)
        result = stats.ttest_ind(t, c, equal_var=False)
        p = result.pvalue
        df = result.df
    se = math.sqrt(vt / nt + vc / nc)
    diff = mt - mc
    rel_var = (vt / nt) / mc**2 + mt**2 * (vc / nc) / mc**4
    z = diff / se
    alpha = 0.05
    rho2 = (-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / 10_000
    tau2 = rho2 * (vt + vc)
    v = se * se
    half = math.sqrt(v * (v + tau2) / tau2 * (math.log((v + tau2) / v) - 2 * math.log(alpha)))
    return {
        "mean": mt,
        "difference": diff,
        "standardError": se,
        "interval": (diff - Z * se, diff + Z * se),
        "relativeDifference": diff / mc,
        "relativeInterval": (diff / mc - Z * math.sqrt(rel_var), diff / mc + Z * math.sqrt(rel_var)),
        "pValue": p,
        "degreesOfFreedom": df,
        "chanceToBeatControl": stats.norm.cdf(z if better == "higher" else -z),
        "sequentialInterval": (diff - half, diff + half),
    }


def compare(feature, readout, goals, totals_by_variation, users_by_variation):
    epoch = readout["epochs"][-1]
    control = epoch["control"]
    for goal in epoch["goals"]:
        name = goal["goal"]["name"]
        if name not in goals:
            continue  # The demo's own goal (signup), with no events for these users.
        kind, better = goals[name]
        rows = {row["variation"]: row for row in goal["variations"]}
        expect(not goal["tooFewUsers"], f"{feature}/{name}: too few users with {len(users_by_variation[control])}")
        pvalues, names = [], []
        for variation, users in users_by_variation.items():
            row = rows[variation]
            totals = [totals_by_variation[name].get(u, 0.0) for u in users]
            expect(row["users"] == len(users), f"{feature}/{name}/{variation}: {row['users']} users, expected {len(users)}")
            close(f"{feature}/{name}/{variation} mean", row["mean"], float(np.mean(totals)))
            if variation == control:
                continue
            control_totals = [totals_by_variation[name].get(u, 0.0) for u in users_by_variation[control]]
            theirs = reference(kind, better, control_totals, totals)
            ours = row["comparison"]
            for key in ["difference", "standardError", "relativeDifference", "pValue", "degreesOfFreedom",
                        "chanceToBeatControl"]:
                close(f"{feature}/{name}/{variation} {key}", ours[key], theirs[key])
            for key in ["interval", "relativeInterval", "sequentialInterval"]:
                close(f"{feature}/{name}/{variation} {key}.low", ours[key]["low"], theirs[key][0])
                close(f"{feature}/{name}/{variation} {key}.high", ours[key]["high"], theirs[key][1])
            pvalues.append(theirs["pValue"])
            names.append(variation)
        for variation, adjusted in zip(names, multipletests(pvalues, method="holm")[1]):
            close(f"{feature}/{name}/{variation} Holm", rows[variation]["comparison"]["adjustedPValue"], adjusted)
    observed = [row["splitUsers"] for row in epoch["variations"]]
    shares = [row["share"] for row in epoch["variations"]]
    expected = [sum(observed) * s / sum(shares) for s in shares]
    chi2, p = stats.chisquare(observed, expected)
    close(f"{feature} SRM statistic", epoch["sampleRatio"]["statistic"], chi2)
    close(f"{feature} SRM p", epoch["sampleRatio"]["pValue"], p)
    return epoch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--base", required=True)
    parser.add_argument("--key", required=True)
    args = parser.parse_args()
    binary, db = args.binary, args.db
    rng = random.Random(20261124)

    goals = {"purchase": ("conversion", "higher"), "revenue": ("value", "higher"), "crashes": ("count", "lower")}
    for name, (kind, better) in goals.items():
        run(binary, db, "goal", "create", name, "--kind", kind, "--better", better, "--tenant", "demo")

    # Users the demo recorded in the A/B test before this check (its apps that fetch with
    # attributes): the test's intention-to-treat readout counts them too, with no events.
    recorded = json.loads(run(binary, db, "assignments", "--feature", "Example A/B Test", "--tenant", "demo",
                              "--json", "--limit", "1000000"))
    ab = {event["user"]: event["variation"] for event in recorded if event["reason"] == "first"}
    ab.update(assign(binary, db, "Example A/B Test", [f"ab-{i}" for i in range(4000)]))
    mvt = assign(binary, db, "Example MVT Test", [f"mvt-{i}" for i in range(6000)])
    start = datetime.datetime.now(datetime.timezone.utc).timestamp() + 1
    effects = {}
    events = []
    totals = {feature: {g: {} for g in goals} for feature in ["ab", "mvt"]}

    def add(feature, user, goal, value, t, counts):
        event = {"id": f"e{len(events)}", "user": user, "goal": goal, "time": iso(t)}
        if value is not None:
            event["value"] = value
        events.append(event)
        if counts:
            kind = goals[goal][0]
            old = totals[feature][goal].get(user, 0.0)
            totals[feature][goal][user] = 1.0 if kind == "conversion" else old + (value if kind == "value" else 1)

    variations_ab = sorted(set(ab.values()))
    variations_mvt = sorted(set(mvt.values()))
    for index, v in enumerate(variations_ab + variations_mvt):
        effects[v] = index
    exposed = {}
    for feature, users, variations in [("ab", ab, variations_ab), ("mvt", mvt, variations_mvt)]:
        for user, variation in users.items():
            lift = variations.index(variation)
            exposure = None
            if feature == "mvt":
                if rng.random() < 0.3:
                    continue  # Never shown the feature: not in the exposure analysis.
                exposure = start + 30
                events.append({"id": f"x{user}", "user": user, "goal": "$exposure", "feature": "Example MVT Test",
                               "time": iso(exposure)})
                exposed.setdefault(variation, []).append(user)
                # Before exposure: kept, never counted.
                if rng.random() < 0.3:
                    add(feature, user, "purchase", None, start + 10, False)
            when = start + 40 if exposure else start + 5
            for _ in range(2 if rng.random() < 0.1 + 0.02 * lift else 0):
                add(feature, user, "purchase", None, when, True)
            if rng.random() < 0.2:
                add(feature, user, "revenue", round(rng.lognormvariate(3 + 0.1 * lift, 1), 2), when, True)
            for _ in range(rng.choice([0, 0, 1, 2, 3]) + (1 if lift == 0 and rng.random() < 0.5 else 0)):
                add(feature, user, "crashes", None, when, True)

    rng.shuffle(events)
    batches = [events[i:i + 1000] for i in range(0, len(events), 1000)]
    with multiprocessing.Pool(2) as pool:
        outcomes = pool.map(post, [(args.base, args.key, batches, 1), (args.base, args.key, batches, 2)])
    accepted = sum(a for a, _ in outcomes)
    duplicates = sum(d for _, d in outcomes)
    expect(accepted == len(events), f"{accepted} events accepted of {len(events)} sent four times each")
    expect(duplicates == 3 * len(events), f"{duplicates} duplicates, expected {3 * len(events)}")

    def users_by(assignments, only=None):
        grouped = {}
        for user, variation in assignments.items():
            grouped.setdefault(variation, []).append(user)
        if only is not None:
            grouped = {v: only.get(v, []) for v in grouped}
        return dict(sorted(grouped.items(), key=lambda item: item[0]))

    def readout(feature):
        return json.loads(run(binary, db, "results", feature, "--tenant", "demo", "--json"))

    epoch = compare("Example A/B Test", readout("Example A/B Test"), goals, totals["ab"], users_by(ab))
    expect(epoch["analysis"] == "intention-to-treat", f"A/B analysis {epoch['analysis']}")
    expect(not epoch["sampleRatio"]["mismatch"], f"a fair split flagged: {epoch['sampleRatio']}")
    mvt_readout = readout("Example MVT Test")
    # The readout's variations come in the test's order; compare in that order.
    order = [row["variation"] for row in mvt_readout["epochs"][-1]["variations"]]
    grouped = users_by(mvt, exposed)
    epoch = compare("Example MVT Test", mvt_readout, goals, totals["mvt"], {v: grouped[v] for v in order})
    expect(epoch["analysis"] == "exposure", f"MVT analysis {epoch['analysis']}")

    # A client that crashes before recording a third of one group's users skews the split.
    onboarding = [f"onb-{i}" for i in range(20000)]
    scratch = db + ".scratch"
    subprocess.run(["cp", db, scratch], check=True)
    would_be = assign(binary, scratch, "New Onboarding", onboarding)
    kept = [u for u in onboarding if would_be[u] != "Enabled" or rng.random() < 0.67]
    assign(binary, db, "New Onboarding", kept)
    skewed = readout("New Onboarding")["epochs"][-1]["sampleRatio"]
    expect(skewed["mismatch"] and skewed["pValue"] < 0.001, f"a skewed split not flagged: {skewed}")
    text = run(binary, db, "results", "New Onboarding", "--tenant", "demo")
    expect("SAMPLE RATIO MISMATCH" in text, "the text readout doesn't say the split is off")

    if failures:
        print(f"{len(failures)} check(s) failed:")
        for failure in failures[:60]:
            print("  " + failure)
        sys.exit(1)
    print(f"Results: {len(events)} events sent 4 times from 2 processes counted once; all {compared[0]} figures of 2 tests x "
          f"{len(goals)} goals agree with scipy/statsmodels; the skewed split flagged (p = {skewed['pValue']:.2e}).")


if __name__ == "__main__":
    main()
