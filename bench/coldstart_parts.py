"""Where the layer's extra cold-start time goes, against the runtime's own boto3 (make coldstart-parts).

    PYTHONPATH=. python bench/coldstart_parts.py --zip build/layer.zip --python 3.12=/path/python3 [...]

bench/coldstart.py shows that importing the layer's boto3 + making the first client takes longer
than the runtime's copy.  This script takes the same trees (built by coldstart.prepare) and, per
CPython, splits the difference three ways, each in fresh interpreters, medians:

1. ``-X importtime`` of ``import boto3`` + first client, self time summed per top-level package
   (``botocore``, ``urllib3``, ``multiprocessing`` ...): which imports are new or heavier.
2. cProfile of the first client alone (boto3 already imported): time per kind of work -- JSON
   decoding (endpoints.json, the service model, the endpoint rule set), gzip decompression
   (botocore ships its models .json.gz since 1.32.1), and the rest.
3. Levers a layer build may legitimately pull (nothing in botocore's or boto3's code is edited):
   ``urllib3<2`` (botocore allows urllib3 1.26 on Python 3.10+; the layer tree with the runtime
   copy's urllib3 1.26.20 in place of 2.x), an endpoints.json cut to DynamoDB's entries (what a
   ``SERVICES=dynamodb`` build ships since tools/build_layer.py trims it), and both, each measured
   as import + first client.

Writes the rows to --json too.  A benchmark, not a test: numbers depend on the machine.
"""

import argparse
import collections
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import build_layer  # noqa: E402  (tools/build_layer.py: the endpoints.json cut a trimmed build makes)
import coldstart  # noqa: E402  (the sibling benchmark: same trees, same environment)
from rows import write_rows  # noqa: E402  (bench/rows.py)

IMPORT_AND_CLIENT = """
import sys
for folder in reversed(%(path)r):
    sys.path.insert(0, folder)
import boto3
boto3.client("dynamodb", region_name="us-east-1")
"""

PROFILE_CLIENT = """
import cProfile, json, pstats, sys
for folder in reversed(%(path)r):
    sys.path.insert(0, folder)
import boto3
profile = cProfile.Profile()
profile.enable()
boto3.client("dynamodb", region_name="us-east-1")
profile.disable()
stats = pstats.Stats(profile).stats
kinds = {"json decode": 0.0, "gzip/zlib": 0.0, "file read": 0.0}
total = sum(tt for _, _, tt, _, _ in stats.values())
for (filename, _, name), (_, _, tt, _, _) in stats.items():
    if filename.endswith(("json/decoder.py", "json/__init__.py")) or "_json" in name or "scanstring" in name:
        kinds["json decode"] += tt
    elif filename.endswith("gzip.py") or "zlib" in name or "decompress" in name:
        kinds["gzip/zlib"] += tt
    elif "read" in name and filename.startswith("~"):
        kinds["file read"] += tt
kinds["total"] = total
print(json.dumps({k: v * 1000 for k, v in kinds.items()}))
"""

TIMED = """
import time
started = time.perf_counter()
""" + IMPORT_AND_CLIENT + """
print((time.perf_counter() - started) * 1000)
"""


# The trees are read, never written: no bytecode written beside them between runs.
CHILD_ENV = coldstart.child_env({"PYTHONDONTWRITEBYTECODE": "1"})


def child(python, code, path, extra=None):
    run = subprocess.run([python, "-s", *(extra or []), "-c", code % {"path": path}], capture_output=True,
                         text=True, env=CHILD_ENV, timeout=120)
    if run.returncode != 0:
        raise SystemExit("coldstart_parts: child failed:\n%s" % run.stderr)
    return run


def importtime_by_package(python, path):
    """Self time (ms) per top-level package, from one -X importtime run."""
    run = child(python, IMPORT_AND_CLIENT, path, ["-X", "importtime"])
    totals = collections.Counter()
    for line in run.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _, name = [part.strip() for part in line[len("import time:"):].split("|")]
        totals[name.split(".")[0]] += int(self_us) / 1000.0
    return totals


def median_counters(counters):
    keys = set().union(*counters)
    return {key: statistics.median(c.get(key, 0.0) for c in counters) for key in keys}


def analyse(minor, python, root, runs):
    runtime = [os.path.join(root, "runtime-" + minor)]
    layer = [os.path.join(root, "layer", "python")]
    layer_urllib3_1 = [os.path.join(root, "layer_urllib3_1-" + minor, "python")]
    trees = {"runtime_copy": runtime, "layer": layer}

    # Every measurement once per round, rounds repeated: load from other work on the machine then
    # falls on every column alike instead of on whichever ran during a busy moment.
    counters = {name: [] for name in trees}
    profile_samples = {name: [] for name in trees}
    both_levers = [os.path.join(root, "layer_levers-" + minor, "python")]
    endpoints_cut = [os.path.join(root, "layer_endpoints_cut-" + minor, "python")]
    paths = {"layer": layer, "layer_urllib3_1": layer_urllib3_1, "layer_endpoints_cut": endpoints_cut,
             "layer_levers": both_levers, "runtime_copy": runtime}
    timed = {name: [] for name in paths}
    for _ in range(runs):
        for name, path in trees.items():
            counters[name].append(importtime_by_package(python, path))
            profile_samples[name].append(json.loads(child(python, PROFILE_CLIENT, path).stdout))
        for name, path in paths.items():
            timed[name].append(float(child(python, TIMED, path).stdout))
    imports = {name: median_counters(values) for name, values in counters.items()}
    print("\nCPython %s: -X importtime, self time per top-level package, ms (median of %d)" % (minor, runs))
    print("%-22s %12s %10s %8s" % ("package", "runtime copy", "layer", "diff"))
    packages = set(imports["runtime_copy"]) | set(imports["layer"])
    diffs = {p: imports["layer"].get(p, 0.0) - imports["runtime_copy"].get(p, 0.0) for p in packages}
    top = sorted(packages, key=lambda p: -abs(diffs[p]))[:12]
    for package in top:
        print("%-22s %12.1f %10.1f %+8.1f" % (package, imports["runtime_copy"].get(package, 0.0),
                                               imports["layer"].get(package, 0.0), diffs[package]))
    totals = {name: sum(values.values()) for name, values in imports.items()}
    print("%-22s %12.1f %10.1f %+8.1f" % ("all imports", totals["runtime_copy"], totals["layer"],
                                           totals["layer"] - totals["runtime_copy"]))

    profiles = {name: {k: statistics.median(s[k] for s in samples) for k in samples[0]}
                for name, samples in profile_samples.items()}
    print("first client (boto3 imported), cProfile tottime by kind, ms (profiler overhead included)")
    for kind in profiles["layer"]:
        print("%-22s %12.1f %10.1f %+8.1f" % (kind, profiles["runtime_copy"][kind], profiles["layer"][kind],
                                               profiles["layer"][kind] - profiles["runtime_copy"][kind]))

    lever = {name: statistics.median(values) for name, values in timed.items()}
    print("levers, import boto3 + first client, ms: runtime copy %.1f, layer %.1f; with urllib3 1.26 %.1f (%+.1f), "
          "with endpoints.json cut to DynamoDB %.1f (%+.1f), both %.1f (%+.1f)" % (
              lever["runtime_copy"], lever["layer"],
              lever["layer_urllib3_1"], lever["layer_urllib3_1"] - lever["layer"],
              lever["layer_endpoints_cut"], lever["layer_endpoints_cut"] - lever["layer"],
              lever["layer_levers"], lever["layer_levers"] - lever["layer"]))
    return {
        "python": minor,
        "importtime_ms": {name: round(total, 1) for name, total in totals.items()},
        "importtime_diff_ms": {p: round(diffs[p], 1) for p in top},
        "client_profile_ms": {name: {k: round(v, 1) for k, v in kinds.items()} for name, kinds in profiles.items()},
        "levers_ms": {name: round(v, 1) for name, v in lever.items()},
    }


def endpoints_json(root, minor, python, runs):
    """Size and json.load time of endpoints.json (what every first client loads): the runtime
    copy's, the layer's, and the layer's cut to DynamoDB's entries (the lever tree main() made)."""
    result = {}
    for name, folder in (("runtime_copy", os.path.join(root, "runtime-" + minor)),
                         ("layer", os.path.join(root, "layer", "python")),
                         ("layer_dynamodb_only", os.path.join(root, "layer_endpoints_cut-" + minor, "python"))):
        path = os.path.join(folder, "botocore", "data", "endpoints.json")
        code = ("import json, statistics, time\ntimes = []\nfor _ in range(%d):\n    t = time.perf_counter()\n"
                "    json.load(open(%r))\n    times.append((time.perf_counter() - t) * 1000)\n"
                "print(statistics.median(times))" % (runs, path))
        load_ms = float(subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout)
        result[name] = {"bytes": os.path.getsize(path), "load_ms": round(load_ms, 1)}
    print("endpoints.json: runtime copy %.2f MB, json.load %.1f ms; layer %.2f MB, %.1f ms" % (
        result["runtime_copy"]["bytes"] / 1e6, result["runtime_copy"]["load_ms"],
        result["layer"]["bytes"] / 1e6, result["layer"]["load_ms"]))
    print("endpoints.json of the layer with only dynamodb's entries (not shipped): %.2f MB, %.1f ms" % (
        result["layer_dynamodb_only"]["bytes"] / 1e6, result["layer_dynamodb_only"]["load_ms"]))
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zip", required=True)
    parser.add_argument("--python", action="append", required=True, help="MINOR=base interpreter")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    pythons = coldstart.parse_pythons(args.python)
    root = tempfile.mkdtemp(prefix="coldstart-parts-")
    rows = []
    try:
        coldstart.prepare(args.zip, pythons, root)
        for minor, python in pythons:
            # The lever tree: the layer as built, its urllib3 2.x swapped for the runtime copy's 1.26.
            lever = os.path.join(root, "layer_urllib3_1-" + minor, "python")
            shutil.copytree(os.path.join(root, "layer", "python"), lever, symlinks=True)
            runtime = os.path.join(root, "runtime-" + minor)
            for name in os.listdir(lever):
                if name == "urllib3" or name.startswith("urllib3-"):
                    shutil.rmtree(os.path.join(lever, name))
            for name in os.listdir(runtime):
                if name == "urllib3" or name.startswith("urllib3-"):
                    shutil.copytree(os.path.join(runtime, name), os.path.join(lever, name))
            # endpoints.json holding only DynamoDB's entries (what a SERVICES=dynamodb build ships; a
            # full build cannot, every service needs its entries), alone and with urllib3 1.26.
            for name, source in (("layer_endpoints_cut-", os.path.join(root, "layer", "python")),
                                 ("layer_levers-", lever)):
                tree = os.path.join(root, name + minor, "python")
                shutil.copytree(source, tree, symlinks=True)
                build_layer.cut_endpoints(os.path.join(tree, "botocore", "data", "endpoints.json"), {"dynamodb"})
            row = analyse(minor, python, root, args.runs)
            row["endpoints_json"] = endpoints_json(root, minor, python, args.runs)
            rows.append(row)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        write_rows(args.json, rows)


if __name__ == "__main__":
    main()
