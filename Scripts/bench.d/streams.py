"""The change streams row of Scripts/bench: COUNT open streams on one server, the memory each
costs the server, and the time from a write to the event reaching the last stream.

Opens COUNT connections to URL (GET, text/event-stream) and waits until each has its answer's
head; reads the server's resident memory (VmRSS of PID) before and after; then makes one write
with WRITE_COMMAND (a shell command) and times until every stream has received an event
(`id: ` line). Prints one JSON object: streams, rss_before_kib, rss_after_kib, kib_per_stream,
write_ms (the write command's own time, which the events' times include), first_event_ms,
last_event_ms.

usage: python3 streams.py URL COUNT PID WRITE_COMMAND
"""
import asyncio
import json
import subprocess
import sys
import time
from urllib.parse import urlsplit

url, count, pid, write_command = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
parts = urlsplit(url)


def rss_kib():
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise SystemExit(f"no VmRSS for process {pid}")


async def open_stream():
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    writer.write(f"GET {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\nAccept: text/event-stream\r\n\r\n".encode())
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        raise SystemExit(f"a stream answered {head[:40]!r}")
    return reader, writer


async def wait_for_event(reader, started):
    while True:
        line = await reader.readline()
        if not line:
            raise SystemExit("a stream ended before its event")
        if line.startswith(b"id: "):
            return time.monotonic() - started


async def main():
    before = rss_kib()
    streams = []
    # In batches, so the server's listen backlog never overflows.
    for start in range(0, count, 500):
        streams += await asyncio.gather(*(open_stream() for _ in range(min(500, count - start))))
    await asyncio.sleep(1)  # the server's side of the last streams settles (subscriptions, buffers)
    after = rss_kib()
    started = time.monotonic()
    waits = [asyncio.create_task(wait_for_event(reader, started)) for reader, _ in streams]
    # The write runs in a thread: the streams must be read while it is under way.
    await asyncio.to_thread(subprocess.run, write_command, shell=True, check=True, stdout=subprocess.DEVNULL)
    written = time.monotonic() - started
    latencies = await asyncio.wait_for(asyncio.gather(*waits), timeout=120)
    for _, writer in streams:
        writer.close()
    print(json.dumps({
        "streams": count,
        "rss_before_kib": before,
        "rss_after_kib": after,
        "kib_per_stream": round((after - before) / count, 1),
        "write_ms": round(written * 1000, 1),
        "first_event_ms": round(min(latencies) * 1000, 1),
        "last_event_ms": round(max(latencies) * 1000, 1),
    }))


asyncio.run(main())
