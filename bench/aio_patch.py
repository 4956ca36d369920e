"""Benchmark: what patching aiobotocore costs, once when the function imports it, and per request.

Run: ``make bench-aio`` (or ``python bench/aio_patch.py [--runs N] NAME...``, the folder names of
the Makefile's AIO_MATRIX).  Prints numbers and writes
the same rows to build/bench-aio-patch.json; asserts nothing.

Timed inside a fresh interpreter per sample, around ``aio.apply`` only: aiobotocore, aiohttp and
botocore are imported first (the function pays for those itself, layer or not).  Each version of
the test matrix (.venv/aio/<python>/<name>, made by ``make test-hook`` or the target) is measured
on the interpreter running this script.

Per request: p50 of 1000 sequential PutItems (after 50 warm-up) by one client of the first version
against the local DynamoDB-shaped server (tests/hook/ddb_server.py, loopback), switch off and on,
alternating, in fresh processes.  Loopback HTTP dominates; the point is whether the wrappers show.
"""

import argparse
import os
import statistics
import subprocess
import sys

from rows import write_rows  # bench/rows.py, next to this script

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYER = os.path.join(REPO, "layer")
MINOR = "%d.%d" % sys.version_info[:2]

APPLY = (
    "import sys, time\n"
    "sys.path[:0] = [sys.argv[1], sys.argv[2]]\n"
    "import aiobotocore.session\n"
    "from aws_keepalive import aio, settings\n"
    "config = settings.Settings(pool_size=32)\n"
    "t0 = time.perf_counter_ns(); aio.apply(config); t1 = time.perf_counter_ns()\n"
    "print(t1 - t0)\n"
)


REQUESTS = (
    "import asyncio, os, sys, time\n"
    "sys.path[:0] = [sys.argv[1], sys.argv[2], sys.argv[3]]\n"
    "if os.environ.get('AWS_PYTHON_KEEPALIVE'):\n"
    "    import aws_keepalive; aws_keepalive.activate('bench')\n"
    "from ddb_server import DynamoDBShapedServer\n"
    "from aiobotocore.session import get_session\n"
    "async def main(url):\n"
    "    async with get_session().create_client('dynamodb', region_name='us-east-1', endpoint_url=url,\n"
    "            aws_access_key_id='a', aws_secret_access_key='b') as client:\n"
    "        item = {'pk': {'S': '1'}}\n"
    "        for _ in range(50): await client.put_item(TableName='t', Item=item)\n"
    "        samples = []\n"
    "        for _ in range(1000):\n"
    "            t0 = time.perf_counter_ns(); await client.put_item(TableName='t', Item=item)\n"
    "            samples.append(time.perf_counter_ns() - t0)\n"
    "        samples.sort(); print(samples[len(samples) // 2])\n"
    "with DynamoDBShapedServer() as server:\n"
    "    asyncio.run(main(server.url))\n"
)


def request_p50_us(folder, switch):
    env = dict(os.environ, AWS_PYTHON_KEEPALIVE=switch)
    completed = subprocess.run(
        [sys.executable, "-c", REQUESTS, LAYER, folder, os.path.join(REPO, "tests", "hook")],
        capture_output=True, text=True, timeout=300, check=True, env=env)
    return int(completed.stdout.strip()) / 1000.0


def sample(folder):
    completed = subprocess.run([sys.executable, "-c", APPLY, LAYER, folder], capture_output=True,
                               text=True, timeout=60, check=True)
    return int(completed.stdout.strip()) / 1000.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--aio-dirs", default=os.path.join(REPO, ".venv", "aio"))
    parser.add_argument("--json", default=os.path.join(REPO, "build", "bench-aio-patch.json"))
    parser.add_argument("versions", nargs="+", help="folders under --aio-dirs/<python>/, newest first")
    args = parser.parse_args()
    rows = []
    print("aio.apply on CPython %s, median of %d fresh processes" % (MINOR, args.runs))
    print("%-22s %10s %10s" % ("version", "p50 us", "max us"))
    for name in args.versions:
        samples = [sample(os.path.join(args.aio_dirs, MINOR, name)) for _ in range(args.runs)]
        row = {"python": MINOR, "version": name, "runs": args.runs,
               "p50_us": round(statistics.median(samples), 1), "max_us": round(max(samples), 1)}
        rows.append(row)
        print("%-22s %10.1f %10.1f" % (name, row["p50_us"], row["max_us"]))
    newest = args.versions[0]
    folder = os.path.join(args.aio_dirs, MINOR, newest)
    per_request = {"off": [], "on": []}
    for _ in range(3):
        for label, switch in (("off", ""), ("on", "1")):
            per_request[label].append(request_p50_us(folder, switch))
    print("PutItem p50 us, %s, loopback, 3 alternating processes of 1000 requests" % newest)
    for label, values in per_request.items():
        print("%-4s %s" % (label, "  ".join("%.1f" % value for value in values)))
        rows.append({"python": MINOR, "version": newest, "switch": label,
                     "request_p50_us": values})
    write_rows(args.json, rows)


if __name__ == "__main__":
    main()
