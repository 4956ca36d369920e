"""The first client of a process with and without the layer's prepared data (make bench-client).

    PYTHONPATH=. python bench/client_creation.py --zip build/layer.zip --python /path/python3.12 \
        [--memory-mb 128 --memory-mb 1769] [--runs 5] [--json build/bench-client.json]

layer/aws_keepalive/prepared.py answers botocore's service listings and its top-level data files
(endpoints.json ...) from what the build prepared.  This measures what that saves where it shows:
the first client of a fresh process (the listing and endpoints.json are paid once per process),
for DynamoDB and for S3, each in its own process, with the full layer as built (its bytecode,
switch on), ``AWS_PYTHON_KEEPALIVE_PREPARED=1`` (``prepared``) against ``=0`` (``stock``: the same
layer loading its data as botocore does), side by side in one run:

* at each ``--memory-mb``'s CPU share (a cgroup v1 CPU quota, lab/standin/cpu_share.py; 1769 MB = 1 vCPU);
* with a warm page cache (the same variant ran once just before, untimed) and a cold one
  (``sync; echo 3 > /proc/sys/vm/drop_caches`` before the run: needs root, else the cold rows are
  skipped and the output says so).

Before that, at full CPU in this process, how long each form of the data client creation reads
takes to load (``formats`` in the JSON): the stock path (read, gunzip, ``json.loads`` with the
``OrderedDict`` hook, as botocore's JSONFileLoader does), ``json.loads`` into plain dicts, marshal of
plain dicts, marshal converted back to ``OrderedDict`` (what equal types would need), and pickle of
the ``OrderedDict`` tree (what prepared.py ships for the top-level files).

Each child times ``import boto3`` and then the client, wall (``perf_counter``) and its own CPU time
(``process_time``: what the child ran, which other processes' load barely moves).  Rounds are
interleaved (every combination once per round, the variants' order alternating) so that drift on
this shared machine hits all alike; medians are reported.  The layer tree is read, never written
(PYTHONDONTWRITEBYTECODE=1).  A benchmark, not a test: numbers depend on the machine.
"""

import argparse
import collections
import gzip
import json
import marshal
import os
import pickle
import shutil
import statistics
import sys
import tempfile
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from rows import interpreter_version, write_rows  # noqa: E402  (first: it notes the load at the start)

import coldstart  # noqa: E402  (the sibling benchmark: the measured child's environment)
from lab.standin import cpu_share  # noqa: E402

CHILD = """
import json, sys, time
sys.path.insert(0, %(layer)r)
import aws_keepalive
aws_keepalive.activate("pth")  # what the layer's .pth line does at startup
wall, cpu = time.perf_counter(), time.process_time()
import boto3
imported = time.perf_counter(), time.process_time()
boto3.client(%(service)r, region_name="us-east-1")
created = time.perf_counter(), time.process_time()
from aws_keepalive import prepared
print(json.dumps({"import_ms": (imported[0] - wall) * 1000, "import_cpu_ms": (imported[1] - cpu) * 1000,
                  "client_ms": (created[0] - imported[0]) * 1000,
                  "client_cpu_ms": (created[1] - imported[1]) * 1000, "used": bool(prepared._state)}))
"""
VARIANTS = {"stock": "0", "prepared": "1"}
SERVICES = ("dynamodb", "s3")


# The files a DynamoDB or S3 client reads from botocore/data.
FORMAT_FILES = ("endpoints.json", "partitions.json", "sdk-default-configuration.json",
                "dynamodb/2012-08-10/service-2.json.gz", "dynamodb/2012-08-10/endpoint-rule-set-1.json.gz",
                "s3/2006-03-01/service-2.json.gz", "s3/2006-03-01/endpoint-rule-set-1.json.gz")


def _median_ms(repeat, function, *args):
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        function(*args)
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 2)


def _ordered(value):
    """A plain-dict tree turned into botocore's types (OrderedDict), as marshal's would need."""
    if type(value) is dict:
        return collections.OrderedDict((key, _ordered(item)) for key, item in value.items())
    if type(value) is list:
        return [_ordered(item) for item in value]
    return value


def _stock_load(path):
    """botocore's JSONFileLoader: read (gunzip), decode, json.loads with the OrderedDict hook."""
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as handle:
        return json.loads(handle.read().decode("utf-8"), object_pairs_hook=collections.OrderedDict)


def _marshal_ordered(data):
    return _ordered(marshal.loads(data))


def measure_formats(data, repeat):
    """Load time of each form of each FORMAT_FILES file, ms (median of ``repeat``), and sizes."""
    rows = []
    for name in FORMAT_FILES:
        path = os.path.join(data, name)
        tree = _stock_load(path)
        text = json.dumps(tree)
        marshalled = marshal.dumps(json.loads(text))
        pickled = pickle.dumps(tree, protocol=5)
        assert _marshal_ordered(marshalled) == tree == pickle.loads(pickled)
        rows.append({
            "file": name, "disk_bytes": os.path.getsize(path), "json_bytes": len(text.encode()),
            "marshal_bytes": len(marshalled), "pickle_bytes": len(pickled),
            "stock_ms": _median_ms(repeat, _stock_load, path),
            "json_plain_ms": _median_ms(repeat, json.loads, text),
            "marshal_ms": _median_ms(repeat, marshal.loads, marshalled),
            "marshal_ordered_ms": _median_ms(repeat, _marshal_ordered, marshalled),
            "pickle_ms": _median_ms(repeat, pickle.loads, pickled),
        })
    print("\nloading the data a DynamoDB / S3 client reads, full CPU, this process; ms (median of %d)" % repeat)
    print("%-48s %9s %9s %9s %9s %9s %9s" % ("file", "disk kB", "stock", "json", "marshal", "+ordered",
                                           "pickle"))
    for row in rows:
        print("%-48s %9.0f %9.2f %9.2f %9.2f %9.2f %9.2f" % (
            row["file"], row["disk_bytes"] / 1000, row["stock_ms"], row["json_plain_ms"], row["marshal_ms"],
            row["marshal_ordered_ms"], row["pickle_ms"]))
    return rows


def drop_page_cache():
    """Empty the page cache (and dentries, inodes); False when this process may not."""
    try:
        os.sync()
        with open("/proc/sys/vm/drop_caches", "w") as control:
            control.write("3\n")
        return True
    except OSError:
        return False


def run_child(python, layer, service, variant, memory_mb):
    env = coldstart.child_env({"PYTHONDONTWRITEBYTECODE": "1", "AWS_PYTHON_KEEPALIVE": "1",
                               "AWS_PYTHON_KEEPALIVE_PREPARED": VARIANTS[variant]})
    completed = cpu_share.run([python, "-s", "-c", CHILD % {"layer": layer, "service": service}], memory_mb,
                              env=env, capture_output=True, text=True, timeout=600)
    if completed.returncode != 0:
        raise SystemExit("client_creation: child failed:\n%s" % completed.stderr)
    result = json.loads(completed.stdout.splitlines()[-1])
    if result["used"] != (variant == "prepared"):
        raise SystemExit("client_creation: %s run did%s use the prepared data" % (
            variant, "" if result["used"] else " not"))
    return result


def measure(python, layer, memories, caches, runs):
    samples = {}
    for round_number in range(runs):
        order = list(VARIANTS) if round_number % 2 == 0 else list(reversed(VARIANTS))
        for memory_mb in memories:
            for cache in caches:
                for service in SERVICES:
                    for variant in order:
                        if cache == "warm":
                            run_child(python, layer, service, variant, 0)
                        else:
                            drop_page_cache()
                        result = run_child(python, layer, service, variant, memory_mb)
                        samples.setdefault((memory_mb, cache, service, variant), []).append(result)
        print("round %d of %d done" % (round_number + 1, runs), flush=True)
    return samples


def rows_from(samples, memories, caches, version):
    rows = []
    for memory_mb in memories:
        for cache in caches:
            for service in SERVICES:
                row = {"memory_mb": memory_mb, "cpu_share": round(cpu_share.share(memory_mb), 4), "cache": cache,
                       "service": service, "python_version": version}
                for variant in VARIANTS:
                    results = samples[(memory_mb, cache, service, variant)]
                    for key in ("import_ms", "import_cpu_ms", "client_ms", "client_cpu_ms"):
                        row["%s_%s" % (variant, key)] = round(statistics.median(r[key] for r in results), 1)
                    row["runs"] = len(results)
                row["client_ratio"] = round(row["prepared_client_ms"] / row["stock_client_ms"], 2)
                row["client_cpu_ratio"] = round(row["prepared_client_cpu_ms"] / row["stock_client_cpu_ms"], 2)
                row["client_saved_ms"] = round(row["stock_client_ms"] - row["prepared_client_ms"], 1)
                rows.append(row)
    return rows


def print_table(rows):
    print("\nfirst client of a process, full layer on, AWS_PYTHON_KEEPALIVE_PREPARED=0 (stock) vs 1 (prepared);"
          " medians, ms (wall; CPU in parentheses)")
    print("%-9s %-5s %-9s %19s %19s %8s %8s %19s" % (
        "memory", "cache", "client", "stock", "prepared", "ratio", "saved", "import boto3 (stock)"))
    for row in rows:
        print("%-9s %-5s %-9s %10.1f (%6.1f) %10.1f (%6.1f) %7.2fx %8.1f %10.1f (%6.1f)" % (
            "%d MB" % row["memory_mb"], row["cache"], row["service"],
            row["stock_client_ms"], row["stock_client_cpu_ms"],
            row["prepared_client_ms"], row["prepared_client_cpu_ms"],
            row["client_ratio"], row["client_saved_ms"], row["stock_import_ms"], row["stock_import_cpu_ms"]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zip", required=True, help="the full layer (make layer)")
    parser.add_argument("--python", required=True, help="the interpreter the children run on")
    parser.add_argument("--memory-mb", type=int, action="append", help="Lambda memory size (default: 128, 1769)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    memories = args.memory_mb or [128, 1769]
    caches = ["warm", "cold"]
    if not drop_page_cache():
        print("client_creation: cannot drop the page cache (not root): warm rows only")
        caches = ["warm"]
    root = tempfile.mkdtemp(prefix="bench-client-")
    try:
        with zipfile.ZipFile(args.zip) as archive:
            archive.extractall(root)
        layer = os.path.join(root, "python")
        version = interpreter_version(args.python)
        print("CPython %s (%s), %d CPUs, load %.1f; %d interleaved rounds" % (
            version, args.python, os.cpu_count(), os.getloadavg()[0], args.runs), flush=True)
        formats = measure_formats(os.path.join(layer, "botocore", "data"), 21)
        samples = measure(args.python, layer, memories, caches, args.runs)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    rows = rows_from(samples, memories, caches, version)
    print_table(rows)
    if args.json:
        write_rows(args.json, rows, zip=os.path.basename(args.zip), runs=args.runs, formats=formats)


if __name__ == "__main__":
    main()
