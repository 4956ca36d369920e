"""make coldstart-parts: the imports of a cold start, at a Lambda CPU share with a cold page cache
(issue 22 item 3): where they go, what the layer's hook adds, what the layout costs in lookups.

    PYTHONPATH=. python bench/coldstart_parts.py --zip build/layer.zip --hook-zip build/layer-hook.zip \
        --python 3.12=/path/python3 [--memory-mb 128] [--runs N] [--json build/coldstart-parts.json]

The same children as bench/coldstart.py (same trees, same TLS endpoint and trust store, page cache
dropped before each, each in the memory size's cgroup CPU quota), run with ``-X importtime``, for
the runtime copy, the full layer switched off and on, and the hook flavor on the runtime copy. Per
column, medians over ``--runs`` rounds:

1. ``-X importtime`` self time summed per top-level package (``botocore``, ``urllib3``, ``ssl`` ...),
   and in total: which imports the cold start pays for, and which are the layer's own;
2. the modules the process holds after its first call (``sys.modules``), and those a switched-on
   layer holds that the same SDK without it does not: what the hook imports at startup that the
   function would not import itself;
3. file system calls (``strace -f -c``, warm cache, no quota: counts do not depend on either) of the
   same span: every ``stat``/``openat``/``getdents64`` an import makes, found or not. Each
   ``sys.path`` entry searched costs lookups, and on a cold page cache every lookup of a new
   directory or file is a disk read.

``-X importtime`` slows imports a little (it writes a line per module); compare columns side by
side. A benchmark, not a test: the numbers depend on the machine.
"""

import argparse
import collections
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import coldstart  # noqa: E402  (the sibling benchmark: same trees, children, endpoint)
from rows import write_rows  # noqa: E402  (bench/rows.py)

# (column, coldstart variant, extra environment)
COLUMNS = (
    ("runtime_copy", "runtime_copy", {}),
    ("layer_off", "layer", {"AWS_PYTHON_KEEPALIVE": "0"}),
    ("layer_on", "layer", {}),
    ("hook_layer_on", "hook_layer", {}),
    ("layer_zipped_on", "layer_zipped", {}),
)
# The layout lever: the layer's pure-code dependencies (none reads a data file by path) in one
# stored zip in front of the layer folder, with legacy-layout unchecked-hash .pyc (zipimport reads
# <module>.pyc beside <module>.py, not __pycache__/). botocore and boto3 stay folders: botocore's
# loader lists and opens botocore/data by path.
ZIPPED = ("urllib3", "dateutil", "jmespath", "s3transfer", "six.py")
# What each switched-on column is compared with: the same SDK without the hook at work.
BASE = {"layer_on": "layer_off", "hook_layer_on": "runtime_copy", "layer_zipped_on": "layer_on"}
FILE_SYSCALLS = ("openat", "newfstatat", "stat", "lstat", "fstat", "statx", "getdents64", "readlink",
                 "access", "getcwd")


def zipped_layer(root, python):
    """root/layer_zipped/: the layer with ZIPPED moved into deps.zip (compiled by ``python``)."""
    import zipfile

    tree = os.path.join(root, "layer_zipped", "python")
    shutil.copytree(os.path.join(root, "layer", "python"), tree, symlinks=True)
    staging = os.path.join(root, "layer_zipped", "staging")
    os.makedirs(staging)
    for name in ZIPPED:
        source = os.path.join(tree, name)
        (shutil.copy2 if os.path.isfile(source) else shutil.copytree)(source, os.path.join(staging, name))
        (os.remove if os.path.isfile(source) else shutil.rmtree)(source)
    coldstart.remove_bytecode(staging)
    subprocess.run([python, "-m", "compileall", "-q", "-b", "--invalidation-mode", "unchecked-hash",
                              staging], check=True)
    with zipfile.ZipFile(os.path.join(root, "layer_zipped", "deps.zip"), "w", zipfile.ZIP_STORED) as archive:
        for parent, dirs, files in os.walk(staging):
            dirs.sort()
            for name in sorted(files):
                path = os.path.join(parent, name)
                archive.write(path, os.path.relpath(path, staging))
    shutil.rmtree(staging)


def importtime(stderr):
    """{module: self µs} from -X importtime's lines."""
    modules = {}
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _, name = [part.strip() for part in line[len("import time:"):].split("|")]
        modules[name.strip()] = int(self_us)
    return modules


def by_package(modules):
    totals = collections.Counter()
    for name, self_us in modules.items():
        totals[name.split(".")[0]] += self_us / 1000.0
    return totals


def syscall_counts(summary_path):
    """{syscall: (calls, errors)} from strace -c's summary table."""
    counts = {}
    with open(summary_path) as summary:
        for line in summary:
            parts = line.split()
            # "% time  seconds  usecs/call  calls  [errors]  syscall"
            if len(parts) in (5, 6) and parts[-1] in FILE_SYSCALLS:
                numbers = [int(value) for value in parts[3:-1]]
                counts[parts[-1]] = (numbers[0], numbers[1] if len(numbers) == 2 else 0)
    return counts


def strace_column(python, minor, variant, extra, root, url, env):
    folder = tempfile.mkdtemp(prefix="coldstart-strace-")
    try:
        summary = os.path.join(folder, "summary")
        wrapper = ["strace", "-f", "-qq", "-c", "-o", summary, "-e", "trace=" + ",".join(FILE_SYSCALLS)]
        coldstart.measure(python, minor, variant, None, root, url, dict(env, **extra), False, wrapper=wrapper)
        return syscall_counts(summary)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def analyse(args, minor, python, root, url, env):
    samples = {name: [] for name, _, _ in COLUMNS}
    for index in range(args.runs):
        for name, variant, extra in COLUMNS:
            samples[name].append(coldstart.measure(python, minor, variant, args.memory_mb, root, url,
                                                   dict(env, **extra), args.drop, flags=["-X", "importtime"]))
        print("  round %d/%d done (load %.1f)" % (index + 1, args.runs, os.getloadavg()[0]), flush=True)
    rows = []
    for name, variant, extra in COLUMNS:
        runs = samples[name]
        modules = [importtime(run["stderr"]) for run in runs]
        packages = [by_package(m) for m in modules]
        keys = set().union(*packages)
        # Means, not medians: under a CPU quota the wall time of one throttled period (~93 ms at
        # 128 MB) lands on whichever module runs out the budget; averaged over rounds it falls on
        # each module in proportion to its cost.
        package_ms = {key: statistics.mean(p.get(key, 0.0) for p in packages) for key in keys}
        row = {
            "python": minor, "memory_mb": args.memory_mb, "column": name, "botocore": runs[0]["botocore"],
            "import_ms": round(statistics.median(r["import_ms"] for r in runs), 1),
            "total_ms": round(statistics.median(r["total_ms"] for r in runs), 1),
            "importtime_self_ms": round(statistics.median(sum(m.values()) / 1000.0 for m in modules), 1),
            "modules_imported": round(statistics.median(len(m) for m in modules)),
            "importtime_package_ms": {k: round(v, 1) for k, v in sorted(package_ms.items(), key=lambda kv: -kv[1])},
            "modules": runs[0]["modules"],
        }
        counts = strace_column(python, minor, variant, extra, root, url, env) if shutil.which("strace") else {}
        row["syscalls"] = {k: {"calls": c, "errors": e} for k, (c, e) in sorted(counts.items())}
        row["file_syscalls"] = sum(c for c, _ in counts.values())
        row["file_syscalls_failed"] = sum(e for _, e in counts.values())
        rows.append(row)
    columns = {row["column"]: row for row in rows}
    for row in rows:
        base = BASE.get(row["column"])
        if base:
            added = sorted(set(row["modules"]) - set(columns[base]["modules"]))
            row["modules_added"] = added
            row["modules_compared_with"] = base
            self_us = collections.Counter()
            for m in (importtime(r["stderr"]) for r in samples[row["column"]]):
                for module in added:
                    self_us[module] += m.get(module, 0)
            row["modules_added_self_ms"] = round(sum(self_us.values()) / 1000.0 / args.runs, 1)
    for row in rows:
        del row["modules"]
    return rows


def print_rows(rows):
    print("imports of a cold start (addsitedir + import boto3 + first client + first call), ms, medians")
    print("%-15s %9s %9s %16s %14s %10s" % ("column", "import", "total", "importtime self", "file syscalls",
                                            "failed"))
    for row in rows:
        print("%-15s %9.0f %9.0f %16.0f %14d %10d" % (row["column"], row["import_ms"], row["total_ms"],
                                                     row["importtime_self_ms"], row["file_syscalls"],
                                                     row["file_syscalls_failed"]))
    packages = collections.Counter()
    for row in rows:
        for key, value in row["importtime_package_ms"].items():
            packages[key] = max(packages[key], value)
    top = [key for key, _ in packages.most_common(16)]
    print("-X importtime self time per top-level package, ms (mean):")
    print("%-22s" % "package" + "".join("%15s" % row["column"] for row in rows))
    for key in top:
        print("%-22s" % key + "".join("%15.1f" % row["importtime_package_ms"].get(key, 0.0) for row in rows))
    for row in rows:
        if "modules_added" in row:
            print("%s holds %d modules %s does not (%.1f ms importtime self): %s" % (
                row["column"], len(row["modules_added"]), BASE[row["column"]], row["modules_added_self_ms"],
                ", ".join(row["modules_added"])))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zip", required=True)
    parser.add_argument("--hook-zip", required=True)
    parser.add_argument("--python", action="append", required=True, help="MINOR=base interpreter")
    parser.add_argument("--memory-mb", type=int, default=128)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    pythons = coldstart.parse_pythons(args.python)
    root = tempfile.mkdtemp(prefix="coldstart-parts-")
    rows = []
    try:
        coldstart.prepare(args.zip, pythons, root, args.hook_zip)
        bundle = coldstart.make_trust(root)
        coldstart.know_bundle(root, bundle)
        zipped_layer(root, pythons[0][1])  # a copy of the layer as prepared (the first CPython's .pyc)
        refused = coldstart.drop_page_cache()
        args.drop = refused is None
        page_cache = "dropped before each run" if args.drop else "not dropped: " + refused
        print("coldstart-parts: %d MB CPU share, page cache %s, %d rounds" % (args.memory_mb, page_cache, args.runs))
        # The trees are read, never written: no bytecode written beside them between runs.
        env = {"PYTHONDONTWRITEBYTECODE": "1", "AWS_CA_BUNDLE": bundle}
        with coldstart.endpoint(root) as server:
            for minor, python in pythons:
                rows += analyse(args, minor, python, root, server.url, env)
        print_rows(rows)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        write_rows(args.json, rows, page_cache=page_cache, runs=args.runs)


if __name__ == "__main__":
    main()
