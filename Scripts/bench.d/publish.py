"""The publish row of Scripts/bench: `flagpole publish` beside `aws s3 sync` of the same tree.

    python3 publish.py prepare FLAGPOLE DATABASE COUNT FEATURES_FILE
    python3 publish.py FLAGPOLE DATABASE WORK_DIR CHANGE_FILE

DATABASE holds the environments to publish (tenant `pub`, made by the bench); CHANGE_FILE is a
features.json imported into the first of them for the "one changed" step. moto's S3 server runs
in a process of its own; a counting proxy (check-publish.d/fault_proxy.py, no faults) sits
between it and both clients, so requests are counted the same way for both. Prints one JSON
object: for each step, flagpole's and aws's seconds and requests by method.
"""

import http.client
import json
import os
import subprocess
import sys
import time
import urllib.request
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "check-publish.d"))
sys.dont_write_bytecode = True

from fault_proxy import FaultProxy  # noqa: E402
from s3 import free_port  # noqa: E402

BUCKET = "bench"


def wait_for(url, seconds=30):
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(url, timeout=1).read()
            return
        except Exception:
            if time.monotonic() > deadline:
                raise SystemExit(f"publish: moto did not answer at {url}")
            time.sleep(0.05)


def timed(command, env):
    started = time.perf_counter()
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(
            f"publish: {' '.join(command[:3])} … failed ({result.returncode}): {result.stderr[-2000:]}{result.stdout[-2000:]}")
    return seconds, result.stdout


def counted(proxy, action):
    proxy.reset()
    seconds, output = action()
    methods = Counter(method for method, _ in proxy.requests)
    puts = [path for method, path in proxy.requests if method == "PUT"]
    return {"seconds": round(seconds, 3), "requests": sum(methods.values()), "byMethod": dict(methods), "puts": puts}, output


def prepare(flagpole, database, count, features_file):
    """Tenant `pub` with environments e1…eCOUNT, each with FEATURES_FILE plus a feature of its
    own (so that no two documents are the same), made through the admin API of one server."""
    subprocess.run([flagpole, "tenant", "create", "pub", "--db", database], check=True, capture_output=True)
    key = subprocess.run([flagpole, "key", "create", "--tenant", "pub", "--role", "admin", "--db", database],
                         check=True, capture_output=True, text=True).stdout.strip()
    server = subprocess.Popen([flagpole, "serve", "--port", "0", "--db", database, "--log-level", "error"],
                              stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        port = int(line.split("http://127.0.0.1:")[1].split(" ")[0])
        connection = http.client.HTTPConnection("127.0.0.1", port)
        document = json.load(open(features_file))
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

        def post(path, body):
            connection.request("POST", path, body=body, headers=headers)
            answer = connection.getresponse()
            text = answer.read()
            if answer.status >= 300:
                raise SystemExit(f"publish: POST {path} answered {answer.status}: {text[:300]}")

        for index in range(1, count + 1):
            name = f"e{index}"
            if name != "production":
                post("/api/v1/tenants/pub/environments", json.dumps({"name": name}))
            document["features"].append({"name": f"Environment {index}", "enabled": True})
            post(f"/api/v1/tenants/pub/environments/{name}/import", json.dumps(document))
            document["features"].pop()
    finally:
        server.terminate()
        server.wait()


def main():
    if sys.argv[1] == "prepare":
        prepare(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
        return
    flagpole, database, work, change_file = sys.argv[1:5]
    port = free_port()
    moto = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proxy = None
    try:
        wait_for(f"http://127.0.0.1:{port}/moto-api/data.json")
        proxy = FaultProxy(port)
        proxy.start()
        endpoint = f"http://127.0.0.1:{proxy.port}"
        env = dict(os.environ, AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_REGION="us-east-1",
                   AWS_ENDPOINT_URL=endpoint, AWS_CONFIG_FILE="/dev/null", AWS_SHARED_CREDENTIALS_FILE="/dev/null")
        timed(["aws", "s3api", "create-bucket", "--bucket", BUCKET], env)
        tree = os.path.join(work, "publish-tree")
        publish = [flagpole, "publish", "--to", f"s3://{BUCKET}/flagpole", "--db", database, "--json"]
        sync = ["aws", "s3", "sync", tree, f"s3://{BUCKET}/sync", "--no-progress", "--only-show-errors"]
        export = [flagpole, "export", "--all", "--dir", tree, "--db", database]
        results = {}

        def step(name, before=None):
            if before:
                before()
            flagpole_figures, output = counted(proxy, lambda: timed(publish, env))
            report = json.loads(output)
            assert report["outcome"] in ("published", "unchanged"), report["outcome"]
            flagpole_figures["objects"] = len(report["objects"])
            flagpole_figures["environments"] = len(report["environments"])
            export_seconds, _ = timed(export, env)
            aws_figures, _ = counted(proxy, lambda: timed(sync, env))
            aws_figures["exportSeconds"] = round(export_seconds, 3)
            results[name] = {"flagpole": flagpole_figures, "aws": aws_figures}

        step("first")
        step("unchanged")
        step("oneChanged", before=lambda: timed(
            [flagpole, "import", change_file, "--tenant", "pub", "--env", "e1", "--db", database], env))
        # After one environment changed: its changed objects and the manifest, nothing else.
        changed = results["oneChanged"]["flagpole"]["puts"]
        results["oneChanged"]["flagpole"]["onlyThatEnvironment"] = bool(changed) and all(
            key.startswith(f"/{BUCKET}/flagpole/pub/e1/") or key == f"/{BUCKET}/flagpole/manifest.json"
            for key in changed) and changed[-1] == f"/{BUCKET}/flagpole/manifest.json"
        for figures in results.values():
            for side in figures.values():
                puts = side.pop("puts")
                side["putKeys"] = sorted(puts) if len(puts) <= 20 else f"{len(puts)} keys"
        print(json.dumps(results))
    finally:
        if proxy:
            proxy.stop()
        moto.terminate()
        moto.wait()


if __name__ == "__main__":
    main()
