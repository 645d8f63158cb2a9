"""The signins row's baseline: COUNT scrypt hashes at OWASP's cost (N = 2^17, r = 8, p = 1) with
Python's hashlib (OpenSSL's scrypt), PROCESSES at a time; prints the wall time in ms."""

import hashlib
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor


def one(_):
    hashlib.scrypt(b"correct horse battery staple", salt=os.urandom(16), n=1 << 17, r=8, p=1, maxmem=256 << 20, dklen=32)


def main():
    count, processes = int(sys.argv[1]), int(sys.argv[2])
    start = time.perf_counter()
    if processes == 1:
        for index in range(count):
            one(index)
    else:
        with ProcessPoolExecutor(processes) as pool:
            list(pool.map(one, range(count)))
    print(f"{(time.perf_counter() - start) * 1000:.1f}")


main()
