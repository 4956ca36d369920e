"""Benchmark: PutItem throughput of sequential, threaded and async clients, beside the server's limit.

    make bench-throughput [BENCH_N=2000] [BENCH_RTT_MS=4] [BENCH_CONCURRENCY=32]
    .venv/bench/bin/python bench/throughput.py --items 2000 --rtt-ms 4 --concurrency 32 --json out.json

Prints a table and writes the same rows to ``--json``; asserts nothing.  A put that fails (after the
SDK's retries) is counted in its configuration's row (``failed``, and ``failures``: count per
exception) and the run goes on; a worker that dies gets a row saying how (issue 31) (tests/lab/
test_bench_throughput.py runs it small and checks the rows are consistent).

The seed comparison (one of the articles this project started from, 10 000 DynamoDB writes:
sequential boto3 832.65, threaded boto3 71.23, aiohttp with hand-signed requests 11.06, i.e.
1 : 11.7 : 75) reproduced in the lab: DynamoDB Local (lab/services/dynamodb.py) behind the TLS front
(lab/net/tls_front.py) behind Netem (lab/net/netem.py) adding ``--rtt-ms`` of round trip. Each
configuration gets a fresh Netem, so its ``accepted`` count is that configuration's new connections
(TCP + TLS handshakes across the RTT), warm-up included. Each configuration runs in its own
interpreter (bench/throughput_worker.py), with ``--memory-mb`` at that Lambda memory size's CPU
share (lab/standin/cpu_share.py; make bench-throughput passes MEMORY_MB) and a real-size trust store (the
SDK's default bundle + the lab CA, lab/standin/trust_store.py), as a function on Lambda: cold, and with
the layer (``layer/`` added as a site directory, switch on,
``AWS_PYTHON_KEEPALIVE_POOL_SIZE=concurrency``) or without it.

Rows: ``sequential``, ``threads-stock``, ``threads-layer``, ``aiobotocore-stock``,
``aiobotocore-layer``, then ``raw`` (the limit: a client that costs nothing, same network, same
concurrency) and ``raw-no-network`` (the same client straight to DynamoDB Local's plain HTTP port:
the server alone, what no client can beat on this machine). The two raw rows are limits, not
functions: they run at full CPU whatever ``--memory-mb`` says.

Why the ratios differ from the article's: its server was real DynamoDB far away (tens of ms per
round trip, the server scaling out); here the round trip is a few ms and one DynamoDB Local JVM
on a shared 2-core machine does the work, so the server's own cost per put caps every concurrent
configuration long before 32-way concurrency would (``raw`` shows where).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from rows import write_rows  # bench/rows.py, next to this script

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
WORKER = os.path.join(REPO, "bench", "throughput_worker.py")
LAYER = os.path.join(REPO, "layer")
TABLE = "bench-throughput"
# The article's ratios to sequential (832.65 / 71.23 and 832.65 / 11.06), printed beside ours.
ARTICLE = {"sequential": 1.0, "threads": 832.65 / 71.23, "async": 832.65 / 11.06}
# (configuration, worker configuration, layer on, through the network)
PLAN = (
    ("sequential", "sequential", False, True),
    ("threads-stock", "threads-stock", False, True),
    ("threads-layer", "threads-layer", True, True),
    ("aiobotocore-stock", "aiobotocore-stock", False, True),
    ("aiobotocore-layer", "aiobotocore-layer", True, True),
    ("raw", "raw", False, True),
    ("raw-no-network", "raw", False, False),
)
WORKER_TIMEOUT = 600.0


def worker_env(ddb, layer_on, concurrency, memory_mb=None):
    """An explicit environment: this machine exports AWS_* variables the comparison must not see.
    The credentials and region are the lab's (lab.standin.function_net.create_table makes the table in the
    database of that access key; DynamoDB Local keeps one per key and region)."""
    from lab.standin.lambda_env import BASE_ENV
    from lab.standin.trust_store import sdk_bundle_with

    keys = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_DEFAULT_REGION")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/root"),
           "AWS_CA_BUNDLE": sdk_bundle_with(ddb.ca_bundle_path), "AWS_EC2_METADATA_DISABLED": "true",
           **{key: BASE_ENV[key] for key in keys}}
    if memory_mb is not None:
        env["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] = str(memory_mb)
    if layer_on:
        env.update({"AWS_PYTHON_KEEPALIVE": "1", "AWS_PYTHON_KEEPALIVE_POOL_SIZE": str(concurrency)})
    return env


def run_configuration(ddb, name, worker_name, layer_on, networked, args):
    """One worker run; returns its row (plus the raw worker output for the caller's checks)."""
    from lab.standin.driver import percentile  # nearest rank, as the lab's other tables
    from lab.net.netem import Netem

    netem = Netem(ddb.tls_address, rtt=args.rtt_ms / 1000.0).start() if networked else None
    try:
        endpoint = "https://127.0.0.1:%d" % netem.port if netem else ddb.http_url
        command = [sys.executable, WORKER, "--configuration", worker_name, "--items", str(args.items),
                   "--concurrency", str(args.concurrency), "--endpoint", endpoint, "--table", TABLE]
        if layer_on:
            command += ["--layer", LAYER]
        memory_mb = None if worker_name == "raw" else args.memory_mb
        env = worker_env(ddb, layer_on, args.concurrency, memory_mb)
        from lab.standin import cpu_share

        try:
            proc = cpu_share.run(command, memory_mb, env=env, capture_output=True, text=True,
                                 timeout=WORKER_TIMEOUT)
            out = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else None
            crash = None if out is not None else "exit %d: %s" % (
                proc.returncode, (proc.stderr.strip().splitlines() or [""])[-1][:300])
        except subprocess.TimeoutExpired:
            out, crash = None, "timed out after %.0f s" % WORKER_TIMEOUT
        new_connections = netem.accepted if netem else None
    finally:
        if netem is not None:
            netem.stop()
    if out is None:
        # The worker itself died (not a put: those are counted in it): the row says so, the run
        # goes on with the next configuration.
        row = {"configuration": name, "items": 0, "items_per_s": 0.0, "p50_ms": None, "p99_ms": None,
               "new_connections": new_connections, "pool_discards": None, "failed": None,
               "failures": {"worker " + crash: 1}}
        return row, {"layer_modules": []}
    latencies_ms = [s * 1000 for s in out["latencies_s"]]
    row = {"configuration": name, "items": out["items"],
           "items_per_s": round(out["items"] / out["elapsed_s"], 1),
           "p50_ms": round(statistics.median(latencies_ms), 2) if latencies_ms else None,
           "p99_ms": round(percentile(latencies_ms, 99), 2) if latencies_ms else None,
           "new_connections": new_connections, "pool_discards": out["pool_discards"],
           "failed": sum(out["failures"].values()), "failures": out["failures"]}
    return row, out


def article_ratio(name):
    if name == "sequential":
        return ARTICLE["sequential"]
    if name.startswith("threads"):
        return ARTICLE["threads"]
    if name.startswith("aiobotocore") or name == "raw":
        return ARTICLE["async"]
    return None


def format_table(rows, args):
    sequential = next((r["items_per_s"] for r in rows if r["configuration"] == "sequential"), None)
    head = "%-19s %6s %9s %8s %9s %9s %9s %7s %9s %9s" % (
        "configuration", "items", "items/s", "p50 ms", "p99 ms", "new conn", "discards", "failed", "ratio",
        "article")
    share = ("full CPU" if args.memory_mb is None else
             "clients at %d MB's CPU share (raw rows: full CPU)" % args.memory_mb)
    lines = ["PutItem throughput: N=%d, RTT %s ms, concurrency %d (DynamoDB Local over TLS behind Netem), %s"
             % (args.items, args.rtt_ms, args.concurrency, share), head, "-" * len(head)]
    for r in rows:
        ratio = "%.1f" % (r["items_per_s"] / sequential) if sequential and r["items_per_s"] else "-"
        article = article_ratio(r["configuration"])
        lines.append("%-19s %6d %9.1f %8s %9s %9s %9s %7s %9s %9s" % (
            r["configuration"], r["items"], r["items_per_s"], _number(r["p50_ms"]), _number(r["p99_ms"]),
            _number(r["new_connections"]), _number(r["pool_discards"]), _number(r["failed"]), ratio,
            "-" if article is None else "%.1f" % article))
    for r in rows:
        for kind, count in sorted(r["failures"].items()):
            lines.append("failed in %s: %d x %s" % (r["configuration"], count, kind))
    return "\n".join(lines)


def _number(value):
    return "-" if value is None else value if isinstance(value, int) else "%.2f" % value


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--items", type=int, default=2000)
    p.add_argument("--rtt-ms", type=float, default=4.0)
    p.add_argument("--concurrency", type=int, default=32)
    p.add_argument("--memory-mb", type=int, default=None,
                   help="run the client configurations at this Lambda memory size's CPU share "
                        "(default or 0: full CPU, no quota)")
    p.add_argument("--json", default=os.path.join(REPO, "build", "bench-throughput.json"))
    args = p.parse_args(argv)
    args.memory_mb = args.memory_mb or None
    from lab.services.dynamodb import DynamoDBLocal
    from lab.standin.function_net import create_table

    rows = []
    notes = []
    with DynamoDBLocal() as ddb:
        create_table(ddb, TABLE)
        for name, worker_name, layer_on, networked in PLAN:
            started = time.monotonic()
            row, out = run_configuration(ddb, name, worker_name, layer_on, networked, args)
            rows.append(row)
            if name == "aiobotocore-layer" and "aws_keepalive.aio" not in out["layer_modules"]:
                notes.append("aiobotocore-layer: this layer has no aiobotocore patch (aws_keepalive.aio was "
                             "not imported): the row is the stock client with the layer present")
            print("  %-19s done in %.1f s" % (name, time.monotonic() - started), file=sys.stderr)
    print(format_table(rows, args))
    for note in notes:
        print("note: " + note)
    write_rows(args.json, rows, items=args.items, rtt_ms=args.rtt_ms, concurrency=args.concurrency,
               memory_mb=args.memory_mb, notes=notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
