"""Inputs of the targeting rows of Scripts/bench.

    python3 targeting.py rules FIRST LAST         five rules serving the variations FIRST and LAST:
                                                  four that never match a German 5.2 user, then a
                                                  split that does
    python3 targeting.py features COUNT           COUNT A/B tests, test-0 … test-(COUNT-1)
    python3 targeting.py record URL PATH COUNT PREFIX MEMBERS
                                                  records COUNT users through OFREP bulk
                                                  evaluations with MEMBERS, on one connection
    python3 targeting.py put-rules URL KEY ENV_PATH COUNT
                                                  the five rules on test-0 … test-(COUNT-1), one
                                                  PUT each through the admin API
"""
import http.client
import json
import sys
import urllib.parse


def rules(first="A", last="B"):
    return {"rules": [
        {"id": "france", "clauses": [{"attribute": "country", "operator": "equals", "values": ["FR"]}],
         "serve": {"variation": first}},
        {"id": "old-apps", "clauses": [{"attribute": "appVersion", "operator": "versionLessThan", "values": ["4.0"]}],
         "serve": {"variation": first}},
        {"id": "beta", "clauses": [{"operator": "inSegment", "values": ["beta-testers"]}],
         "serve": {"variation": last}},
        {"id": "vips", "clauses": [{"attribute": "targetingKey", "operator": "startsWith", "values": ["vip-"]}],
         "serve": {"variation": last}},
        {"id": "germany-new", "clauses": [
            {"attribute": "country", "operator": "in", "values": ["DE", "AT", "CH"]},
            {"attribute": "appVersion", "operator": "versionGreaterThanOrEqual", "values": ["5.2"]}],
         "serve": {"split": [{"variation": first, "weight": 20}, {"variation": last, "weight": 80}]}},
    ]}


def connection(url):
    parsed = urllib.parse.urlparse(url)
    return http.client.HTTPConnection(parsed.hostname, parsed.port)


def send(conn, method, path, body, headers):
    conn.request(method, path, body=json.dumps(body), headers={"Content-Type": "application/json", **headers})
    response = conn.getresponse()
    data = response.read()
    if response.status != 200:
        sys.exit(f"{method} {path}: {response.status} {data[:300]!r}")


command = sys.argv[1]
if command == "rules":
    print(json.dumps(rules(sys.argv[2], sys.argv[3])))
elif command == "features":
    count = int(sys.argv[2])
    print(json.dumps({"features": [
        {"name": f"test-{n}", "enabled": True, "test-variations": ["A", "B"], "test-biases": [50, 50]}
        for n in range(count)]}))
elif command == "record":
    url, path, count, prefix, members = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6]
    conn = connection(url)
    for n in range(count):
        context = json.loads("{" + members + "}")
        context["targetingKey"] = f"{prefix}{n}"
        send(conn, "POST", path, {"context": context}, {})
elif command == "put-rules":
    url, key, env_path, count = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    conn = connection(url)
    for n in range(count):
        send(conn, "PUT", f"{env_path}/features/test-{n}/rules", rules(), {"Authorization": f"Bearer {key}"})
