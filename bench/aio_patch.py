"""Benchmark: what patching aiobotocore costs, once, when the function imports it.

Run: ``make bench-aio`` (or ``python bench/aio_patch.py [--runs N]``).  Prints numbers and writes
the same rows to build/bench-aio-patch.json; asserts nothing.

Timed inside a fresh interpreter per sample, around ``aio.apply`` only: aiobotocore, aiohttp and
botocore are imported first (the function pays for those itself, layer or not).  Each version of
the test matrix (.venv/aio/<python>/<name>, made by ``make test-hook`` or the target) is measured
on the interpreter running this script.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYER = os.path.join(REPO, "layer")
MINOR = "%d.%d" % sys.version_info[:2]
MATRIX = ["aiobotocore-3.10.0", "aiobotocore-2.26.0", "aioboto3-15.5.0"]

APPLY = (
    "import sys, time\n"
    "sys.path[:0] = [sys.argv[1], sys.argv[2]]\n"
    "import aiobotocore.session\n"
    "from aws_keepalive import aio, settings\n"
    "config = settings.Settings(pool_size=32)\n"
    "t0 = time.perf_counter_ns(); aio.apply(config); t1 = time.perf_counter_ns()\n"
    "print(t1 - t0)\n"
)


def sample(folder):
    completed = subprocess.run([sys.executable, "-c", APPLY, LAYER, folder], capture_output=True,
                               text=True, timeout=60, check=True)
    return int(completed.stdout.strip()) / 1000.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--aio-dirs", default=os.path.join(REPO, ".venv", "aio"))
    parser.add_argument("--json", default=os.path.join(REPO, "build", "bench-aio-patch.json"))
    args = parser.parse_args()
    rows = []
    print("aio.apply on CPython %s, median of %d fresh processes" % (MINOR, args.runs))
    print("%-22s %10s %10s" % ("version", "p50 us", "max us"))
    for name in MATRIX:
        samples = [sample(os.path.join(args.aio_dirs, MINOR, name)) for _ in range(args.runs)]
        row = {"python": MINOR, "version": name, "runs": args.runs,
               "p50_us": round(statistics.median(samples), 1), "max_us": round(max(samples), 1)}
        rows.append(row)
        print("%-22s %10.1f %10.1f" % (name, row["p50_us"], row["max_us"]))
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as out:
        json.dump({"rows": rows}, out, indent=1)


if __name__ == "__main__":
    main()
