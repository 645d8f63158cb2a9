"""An app with the stock Bucketeer iOS SDK, played against a live `flagpole serve --demo`.

    python3 app.py before-restart --origin URL --key ADMIN --delivery-key PROD --staging-key STAGING --state FILE
    python3 app.py after-restart  --origin URL --key ADMIN --delivery-key PROD --staging-key STAGING --state FILE

before-restart: a fresh install, typed reads, polls, a user switch, a relaunch with new
attributes, changes in the store between polls, tags, the bare-host apiEndpoint, the private
environment, v2.0 bodies; last, the tokens and answers of the users are saved in --state.
after-restart (a new server process on the same database): the saved tokens are still current
and a fresh install gets the same token and answer.
Every answer is decoded strictly (§6) and every full one is held to OFREP's for the same user.
"""

import copy
import json

from bucketeer_common import (
    parse_options,
    APP_FLAGS,
    MISSING_FLAG,
    Admin,
    App,
    CheckFailed,
    Install,
    Parts,
    check_against_ofrep,
    decode_evaluations,
    expect,
    expect_full,
    expect_unchanged,
    ofrep_bulk,
    post,
    read_every_flag,
)

PRODUCTION = "/t/demo/production"
STAGING = "/t/demo/staging"
RULE_FEATURE = "Example A/B Test"  # the setup's rule "germany": country DE gets Group B
RULE = {"id": "germany", "clauses": [{"attribute": "country", "operator": "equals", "values": ["DE"]}], "serve": {"variation": "Group B"}}
TAG = "ios"
TAGGED = ["New Onboarding", "Example Feature Flag"]
OVERRIDDEN = "Example MVT Test"
MVT_VARIATIONS = ["Group A", "Group B", "Group C"]
UNLOCK_FLAG = "Example Unlock Flag"
BIASED = "New Onboarding"


class Run:
    def __init__(self, options):
        self.options = options
        self.origin = options.origin
        self.admin = Admin(options.origin, options.key)
        self.alice = None  # (install, app) of the first user
        self.bob = None  # the install the user switch happens on, Bob's app on it
        self.saved = []  # what after-restart checks

    def app(self, install, user, attributes, base=PRODUCTION, key=None, tag=""):
        return App(install, self.origin, base, key or self.options.delivery_key, user, attributes, tag)

    def full_answer(self, app, what, env="production", ofrep_key=None):
        """A fetch that must be the full set: decoded, applied, every flag read with the app's
        getters, equal to OFREP for the same user."""
        exchange, answer, presented = app.fetch()
        expect_full(exchange, answer, what)
        exchange.expect(
            answer["userEvaluationsId"] != presented,
            f"{what}: a full answer must come with a new token, got the presented {presented!r} back",
        )
        read_every_flag(app, exchange)
        stored = app.stored()
        if not app.tag:
            exchange.expect(set(stored) == set(APP_FLAGS), f"{what}: expected every demo flag, the app's cache has {sorted(stored)}")
        check_against_ofrep(exchange, answer, self.origin, env, app.user, app.attributes, app.tag, ofrep_key)
        return exchange, answer

    def unchanged_poll(self, app, what):
        before = copy.deepcopy(app.stored())
        exchange, answer, presented = app.fetch()
        expect_unchanged(exchange, answer, presented, what)
        expect(app.stored() == before, f"{what}: the app's cache changed on an unchanged answer")
        return exchange, answer

    # ------------------------------------------------------------------------------------------

    def setup(self):
        self.admin.call("PUT", self.admin.feature_path("production", RULE_FEATURE) + "/rules", {"rules": [RULE]})
        for name in TAGGED:
            self.admin.call("PUT", self.admin.feature_path("production", name) + "/tags", {"tags": [TAG]})
        return f"rule {RULE['id']!r} on {RULE_FEATURE!r}, tag {TAG!r} on {TAGGED}"

    def fresh_install(self):
        install = Install()
        app = self.app(install, "bk-alice", {"plan": "free", "country": "FR"})
        exchange, answer = self.full_answer(app, "initialize on a fresh install")
        expect(app.request_body()["userEvaluationsId"] == answer["userEvaluationsId"], "the app did not store the token")
        values = read_every_flag(app, exchange)
        value, row = app.variation(MISSING_FLAG, "bool")
        expect(value is None and row is None, f"a flag the store lacks must be missing from the cache, got {row!r}")
        self.alice = (install, app)
        shown = ", ".join(f"{name}={values[name][0]!r}" for name in ["numberOfItemsToDisplay", "discountRate", "theme"])
        return f"{len(answer['evaluations']['evaluations'])} flags read with their getters ({shown}), equal to OFREP"

    def polls(self):
        install, app = self.alice
        token = install.token
        for index in range(3):
            sent = app.request_body()
            expect(sent["userEvaluationCondition"]["evaluatedAt"] == install.evaluated_at, "the app sends its stored createdAt")
            self.unchanged_poll(app, f"poll {index + 1} with nothing changed")
        expect(install.token == token, "the token changed on unchanged polls")
        # A token the server never issued (Bucketeer's own style) or an old one: the full set,
        # and the token of the current answer, whatever was presented.
        for presented in ["9368942808824859638", "no_evaluations"]:
            body = {**app.request_body(), "userEvaluationsId": presented}
            exchange = post(self.origin, f"{PRODUCTION}/get_evaluations", body=body, headers={"Authorization": app.key})
            answer = decode_evaluations(exchange, app.user)
            expect_full(exchange, answer, f"a token the server did not issue ({presented!r})")
            exchange.expect(answer["userEvaluationsId"] == token, f"expected the current answer's token {token!r}")
        return "3 polls: the same token, no evaluations, forceUpdate false; an unknown token gets the full set"

    def user_switch(self):
        install, alice = self.alice
        alice_token = install.token
        # flush + destroy + initialize with another user: the install keeps Alice's token.
        bob = self.app(install, "bk-bob", {"country": "FR"})
        expect(bob.request_body()["userEvaluationsId"] == alice_token, "the install presents the previous user's token")
        exchange, answer = self.full_answer(bob, "initialize for another user presenting the previous user's token")
        for item in answer["evaluations"]["evaluations"]:
            exchange.expect("bk-alice" not in item["id"], f"Bob's answer has Alice's id {item['id']!r}")
        expect(len(bob.stored()) == len(APP_FLAGS), f"Bob's cache: {sorted(bob.stored())}")
        self.unchanged_poll(bob, "Bob's poll with nothing changed")
        self.bob = (install, bob)
        # Alice again on a copy of that install (it holds Bob's token): the full set, and the
        # same token she had, since nothing of hers changed.
        other = copy.deepcopy(install)
        back = self.app(other, "bk-alice", alice.attributes)
        exchange, answer = self.full_answer(back, "switching back to the first user")
        exchange.expect(answer["userEvaluationsId"] == alice_token, f"Alice's token changed: was {alice_token!r}")
        self.alice = (other, back)
        return "Bob got all 12 flags with forceUpdate true, only his ids; back to Alice: her token again"

    def relaunch(self):
        install, bob = self.bob
        # A relaunch with other attributes: initialize does not set userAttributesUpdated (§7).
        bob = self.app(install, "bk-bob", {"country": "DE"})
        expect(bob.request_body()["userEvaluationCondition"]["userAttributesUpdated"] is False, "a relaunch sends userAttributesUpdated false")
        exchange, answer = self.full_answer(bob, "relaunch with new attributes (userAttributesUpdated false)")
        for name in [RULE_FEATURE, "mainViewTitle"]:
            row = bob.stored()[name]
            exchange.expect(
                row["reason"] == {"type": "RULE", "ruleId": RULE["id"]} and row["variationName"] == "Group B",
                f"{name!r} for country DE: expected Group B by rule {RULE['id']!r}, got {row!r}",
            )
        self.unchanged_poll(bob, "poll after the relaunch")
        bob.update_attributes({"country": "DE", "plan": "pro"})
        expect(bob.request_body()["userEvaluationCondition"]["userAttributesUpdated"] is True, "updateUserAttributes sets userAttributesUpdated")
        self.full_answer(bob, "fetch after updateUserAttributes")
        self.unchanged_poll(bob, "poll after updateUserAttributes")
        self.bob = (install, bob)
        return "new attributes at initialize and by updateUserAttributes: a fresh full answer each time, the rule applied"

    def store_change(self):
        _, bob = self.bob
        alice_install, alice = self.alice
        self.unchanged_poll(bob, "Bob's poll before the change")
        revision = bob.stored()[OVERRIDDEN]["featureVersion"]

        # An override for Bob alone.
        current = bob.stored()[OVERRIDDEN]["variationName"]
        target = next(name for name in MVT_VARIATIONS if name != current)
        self.admin.call("PUT", self.admin.feature_path("production", OVERRIDDEN) + f"/overrides/{bob.user}", {"variation": target})
        exchange, answer = self.full_answer(bob, f"Bob's poll after an override of {OVERRIDDEN!r} for him")
        row = bob.stored()[OVERRIDDEN]
        exchange.expect(
            row["variationName"] == target and row["reason"]["type"] == "TARGET",
            f"{OVERRIDDEN!r}: expected {target!r} with reason TARGET, got {row!r}",
        )
        self.check_bystander(alice, revision, "Alice's poll after Bob's override")

        # An unlock for Bob alone.
        self.admin.call("PUT", self.admin.feature_path("production", UNLOCK_FLAG) + f"/unlocks/{bob.user}", {})
        exchange, answer = self.full_answer(bob, f"Bob's poll after unlocking {UNLOCK_FLAG!r} for him")
        row = bob.stored()[UNLOCK_FLAG]
        exchange.expect(
            row["variationValue"] == "true" and row["reason"]["type"] == "TARGET",
            f"{UNLOCK_FLAG!r}: expected \"true\" with reason TARGET, got {row!r}",
        )
        self.check_bystander(alice, revision, "Alice's poll after Bob's unlock")

        # New biases: a new revision, every evaluation's featureVersion with it.
        self.admin.call("POST", self.admin.feature_path("production", BIASED) + "/biases", {"biases": [30, 70]})
        exchange, answer = self.full_answer(bob, f"Bob's poll after new biases of {BIASED!r}")
        versions = {item["featureVersion"] for item in answer["evaluations"]["evaluations"]}
        exchange.expect(len(versions) == 1 and versions.pop() > revision, f"expected every featureVersion above {revision}, got {answer}")
        self.full_answer(alice, "Alice's poll after new biases (a new revision)")
        self.unchanged_poll(bob, "Bob's poll after that")
        self.unchanged_poll(alice, "Alice's poll after that")
        return "override, unlock and biases: the next poll gets a new token and the full set, equal to OFREP"

    def check_bystander(self, app, revision, what):
        """A user whom a change did not touch: the same token if the revision did not move."""
        flags, _ = ofrep_bulk(self.origin, "production", app.user, app.attributes)
        now = flags[OVERRIDDEN]["metadata"]["revision"]
        if now == revision:
            self.unchanged_poll(app, f"{what} (the revision is still {revision})")
        else:
            self.full_answer(app, f"{what} (the revision moved to {now})")

    def tags(self):
        alice_install, alice = self.alice
        tagged = self.app(Install(), alice.user, alice.attributes, tag=TAG)
        exchange, answer = self.full_answer(tagged, f"initialize with featureTag {TAG!r}")
        names = set(tagged.stored())
        exchange.expect(set(TAGGED) <= names and names < set(APP_FLAGS), f"tag {TAG!r}: expected {TAGGED} and not every flag, got {sorted(names)}")
        self.unchanged_poll(tagged, f"poll with featureTag {TAG!r}")
        # A token issued for another tag is not current for this one (MUST 4), either way.
        for tag, token in [(TAG, alice_install.token), ("", tagged.install.token)]:
            body = {**alice.request_body(), "tag": tag, "userEvaluationsId": token}
            exchange = post(self.origin, f"{PRODUCTION}/get_evaluations", body=body, headers={"Authorization": alice.key})
            answer = decode_evaluations(exchange, alice.user)
            expect_full(exchange, answer, f"tag {tag!r} presenting the token of the other tag")
            exchange.expect(answer["userEvaluationsId"] != token, "a token of another tag came back as current")
        # The SDK itself sends "" after a tag change (§5).
        moved = self.app(copy.deepcopy(alice_install), alice.user, alice.attributes, tag=TAG)
        expect(moved.request_body()["userEvaluationsId"] == "", "the app sends an empty token after a tag change")
        return f"tag {TAG!r}: {len(names)} flags, as OFREP's ?tag=; tokens of another tag not current"

    def bare_host(self):
        alice_install, alice = self.alice
        # apiEndpoint = http://HOST with a delivery key scoped to demo/production: the same
        # environment, so Alice's token is current there too, and a fresh install gets the same.
        root = self.app(copy.deepcopy(alice_install), alice.user, alice.attributes, base="")
        self.unchanged_poll(root, "apiEndpoint at the host's root, presenting the token from /t/demo/production")
        fresh = self.app(Install(), alice.user, alice.attributes, base="")
        exchange, answer = self.full_answer(fresh, "fresh install, apiEndpoint at the host's root")
        exchange.expect(answer["userEvaluationsId"] == alice_install.token, "the host's root gave another token than /t/demo/production")
        exchange.expect(fresh.stored() == alice.stored(), "the host's root gave other evaluations than /t/demo/production")
        self.saved.append(self.save(fresh))
        return "POST /get_evaluations with a scoped delivery key: the same answer and token as /t/demo/production"

    def private_environment(self):
        app = self.app(Install(), "bk-frank", {"plan": "team"}, base=STAGING, key=self.options.staging_key)
        self.full_answer(app, "initialize on the private demo/staging", env="staging", ofrep_key=self.options.staging_key)
        self.unchanged_poll(app, "poll on demo/staging")
        self.saved.append(self.save(app))
        # A public environment takes any key: the SDK cannot send an empty one.
        anyone = self.app(Install(), "bk-grace", {}, key="any-key-the-app-was-built-with")
        self.full_answer(anyone, "demo/production with a key the server does not know")
        self.unchanged_poll(anyone, "poll with that key")
        return "demo/staging with its key; demo/production with an unknown key"

    def old_bodies(self):
        """SHOULD: SDKs before 2.1 send no userEvaluationCondition, before 2.1.5 no sdkVersion
        at the top of events; a body with neither is answered like any."""
        _, alice = self.alice
        body = {"tag": "", "user": {"id": alice.user, "data": alice.attributes}, "userEvaluationsId": "", "sourceId": 2}
        exchange = post(self.origin, f"{PRODUCTION}/get_evaluations", body=body, headers={"Authorization": alice.key})
        answer = decode_evaluations(exchange, alice.user)
        expect_full(exchange, answer, "a v2.0 body (no userEvaluationCondition, no sdkVersion)")
        exchange.expect(answer["userEvaluationsId"] == alice.install.token, "a v2.0 body got another token for the same user")
        body["userEvaluationsId"] = answer["userEvaluationsId"]
        exchange = post(self.origin, f"{PRODUCTION}/get_evaluations", body=body, headers={"Authorization": alice.key})
        expect_unchanged(exchange, decode_evaluations(exchange, alice.user), body["userEvaluationsId"], "a v2.0 poll")
        return "v2.0 bodies: the same answer and token"

    def user_ids(self):
        """Ids as apps have them come back exactly (the cache is read WHERE userId = ?), and
        their events are taken."""
        ids = ["alice@example.com", "6F9619FF-8B86-D011-B42D-00C04FC964FF", "José Núñez", "Jose\u0301 (NFD)", "a/b:c?d#e&f=g", "😀 ", "u" * 200]
        for user in ids:
            app = self.app(Install(), user, {"name": "Zoë", "signup": "2026-11-24T10:00:00Z"})
            self.full_answer(app, f"user id {user!r}")
            self.unchanged_poll(app, f"poll of user id {user!r}")
            app.track("signup")
            exchange, errors, _ = app.flush()
            exchange.expect(errors == {}, f"user id {user!r}: expected the events taken")
        return f"{len(ids)} ids (an email, a UUID, accents NFC and NFD, URL characters, an emoji, 200 bytes)"

    def attributes_removed(self):
        """§12 MUST 3: the flags are evaluated for user.id + user.data. A relaunch whose data
        no longer has the attribute a rule reads must not match that rule."""
        install = Install()
        carol = self.app(install, "bk-carol", {"country": "DE"})
        exchange, answer = self.full_answer(carol, "initialize with country DE")
        exchange.expect(carol.stored()[RULE_FEATURE]["reason"]["type"] == "RULE", f"country DE: expected the rule, got {carol.stored()[RULE_FEATURE]!r}")
        carol = self.app(install, "bk-carol", {})
        exchange, answer, presented = carol.fetch()
        expect_full(exchange, answer, "relaunch with user.data {}")
        row = carol.stored()[RULE_FEATURE]
        exchange.expect(
            row["reason"] != {"type": "RULE", "ruleId": RULE["id"]},
            f"relaunch with user.data {{}}: {RULE_FEATURE!r} still comes by rule {RULE['id']!r} (country equals DE), "
            f"which the user's data no longer satisfies (§12 MUST 3: evaluate for user.id + user.data): {row!r}",
        )
        return "user.data {} after country DE: the rule no longer applies"

    def save(self, app):
        return {
            "user": app.user, "attributes": app.attributes, "tag": app.tag, "base": app.base,
            "key": "staging" if app.key == self.options.staging_key else "production",
            "token": app.install.token, "evaluations": sorted(app.stored().values(), key=lambda row: row["id"]),
        }

    def save_state(self):
        self.saved.append(self.save(self.bob[1]))
        self.saved.append(self.save(self.alice[1]))
        with open(self.options.state, "w") as file:
            json.dump(self.saved, file)
        return f"{len(self.saved)} installs saved for after the restart"

    # ------------------------------------------------------------------------------------------

    def after_restart(self):
        try:
            with open(self.options.state) as file:
                saved = json.load(file)
        except FileNotFoundError:
            raise CheckFailed("no state from before the restart: its parts failed (see above)")
        expect(len(saved) >= 4, f"expected the installs of before-restart in the state file, got {len(saved)}")
        for entry in saved:
            key = self.options.staging_key if entry["key"] == "staging" else self.options.delivery_key
            env = "staging" if entry["base"] == STAGING else "production"
            where = f"{entry['user']} at {entry['base'] or 'the host root'}"
            install = Install()
            install.token = entry["token"]
            install.tag = entry["tag"]
            app = self.app(install, entry["user"], entry["attributes"], base=entry["base"], key=key, tag=entry["tag"])
            self.unchanged_poll(app, f"{where}: poll after the restart with the token from before")
            fresh = self.app(Install(), entry["user"], entry["attributes"], base=entry["base"], key=key, tag=entry["tag"])
            exchange, answer = self.full_answer(fresh, f"{where}: fresh install after the restart", env=env, ofrep_key=key if env == "staging" else None)
            exchange.expect(answer["userEvaluationsId"] == entry["token"], f"{where}: the token changed across the restart (was {entry['token']!r})")
            got = sorted(fresh.stored().values(), key=lambda row: row["id"])
            exchange.expect(got == entry["evaluations"], f"{where}: the evaluations changed across the restart: before {entry['evaluations']}")
        return f"{len(saved)} installs: the same token (no evaluations) and the same answer after the restart"


def main():
    options = parse_options((("stage",), {"choices": ["before-restart", "after-restart"]}), (("--state",), {"required": True}))
    run = Run(options)
    parts = Parts(f"app.py {options.stage}")
    if options.stage == "after-restart":
        parts.run("restart: tokens and answers survive a restart", run.after_restart)
        parts.exit()
        return
    if not parts.run("setup (admin API)", run.setup):
        parts.exit()
    # Each part needs the one before it: stop at the first failure of that chain.
    chain = [
        ("fresh install: initialize, strict decoding, typed getters, OFREP agrees", run.fresh_install),
        ("polls with nothing changed", run.polls),
        ("user switch on one install", run.user_switch),
        ("relaunch with new attributes", run.relaunch),
        ("a change in the store between polls", run.store_change),
        ("featureTag", run.tags),
        ("apiEndpoint at the host root", run.bare_host),
        ("v2.0 request bodies (SHOULD)", run.old_bodies),
    ]
    complete = True
    for name, function in chain:
        if not parts.run(name, function):
            complete = False
            break
    parts.run("private and public environments", run.private_environment)
    parts.run("user ids", run.user_ids)
    if complete:
        parts.run("state for the restart", run.save_state)
    parts.run("attributes removed at a relaunch", run.attributes_removed)
    parts.exit()


if __name__ == "__main__":
    main()
