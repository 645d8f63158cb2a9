"""The serve-pg row's propagation: the time from a write answered by one instance to the new
ETag on the other, which learns of it from the shared database.

usage: python3 propagation.py WRITER_URL READER_URL KEY TENANT ENVIRONMENT FEATURE COUNT

Disables and enables FEATURE through WRITER_URL's admin API COUNT times in turn; after each
answer, asks READER_URL for the environment's features.json until its ETag changes. Prints the
median and the 99th percentile, in milliseconds, then every sample.
"""

import statistics
import sys
import time
import urllib.parse
import urllib.request

writer, reader, key, tenant, environment, feature, count = sys.argv[1:8]
document = f"{reader}/t/{tenant}/{environment}/features.json"
action = f"{writer}/api/v1/tenants/{tenant}/environments/{environment}/features/{urllib.parse.quote(feature, safe='')}"


def etag():
    with urllib.request.urlopen(document) as answer:
        return answer.headers["ETag"]


samples = []
for index in range(int(count)):
    before = etag()
    request = urllib.request.Request(
        f"{action}/{'disable' if index % 2 == 0 else 'enable'}", data=b"{}", method="POST",
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request) as answer:  # raises unless 2xx
        answer.read()
    written = time.monotonic()
    while etag() == before:
        if time.monotonic() - written > 10:
            sys.exit(f"the reader never served the write of step {index}")
    samples.append((time.monotonic() - written) * 1000)

samples.sort()
print(f"{statistics.median(samples):.1f} {samples[min(len(samples) - 1, int(len(samples) * 0.99))]:.1f}")
print(" ".join(f"{sample:.1f}" for sample in samples))
