"""What each declared SDK patch (layer/patches/) saves: process CPU of `import boto3` + the first
client, at the depth awslambdaric imports a handler, stock and patched side by side.

Why at that depth: the same import's CPU moves by tens of milliseconds with the call-stack depth it
runs at (CPython's data stack grows in chunks; an import that crosses a chunk boundary in a hot loop,
urllib3's IPv6 regexes once, pays an mmap per call), and a Lambda handler is imported by
awslambdaric's bootstrap, many frames down, not at a script's top level.  So every variant runs the
way the stand-in runtime runs a function (lab/standin/runtime/bootstrap.py: the runtime's startup
steps, then awslambdaric's own ``main``, which imports ``_HANDLER`` before it first calls the Runtime
API), with the variant's SDK as the layer folder (``--opt``).  The handler module measures
``time.process_time()`` around ``import boto3`` and ``boto3.client("dynamodb")``, records its own
frame depth, the module count and the minor page faults (each new data-stack chunk is fresh
memory: a chunk effect shows as more faults), times each group of deferred modules' import after
the client (what a function that uses them pays later), writes it all and exits (no Runtime API is
needed: nothing is invoked).  The same handler imported by ``python -c`` is the ``top`` row (depth
8), for stock and the variants ``--top-variants`` names, so the depth effect shows beside it.

Variants: the pinned wheels (stock), each lever alone (the two docs patches are one lever:
botocore.client imports botocore's docs modules whatever boto3 does), all of them (the release's
SDK), and all but each lever.  Each variant is the lock installed by uv, the patches applied by
tools/packaging/patches.py, then compiled by the measuring interpreter (``unchecked-hash``, as the
layer ships its bytecode).  Rounds are interleaved (every run once per round, in a shuffled order);
the table gives each run's minimum, median and interquartile range, and the saving against stock
by minimum and by median.  Rows go to build/sdk-patches.json (make bench-patches; make docs renders
them into docs/sdk-patches.md).
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)
from bench.rows import interpreter_version, write_rows  # noqa: E402
from tools.packaging import patches as sdk_patches  # noqa: E402

LOCK = os.path.join(REPO, "layer", "requirements.txt")
BOOTSTRAP = os.path.join(REPO, "lab", "standin", "runtime", "bootstrap.py")
# Patches measured as one lever (the docs modules are imported by botocore.client and by
# boto3.resources.action: either alone leaves the trees imported).
LEVERS = {
    "s3transfer (boto3 compat)": ["boto3/0001-lazy-s3transfer-in-compat.patch"],
    "docs modules (boto3 + botocore)": ["boto3/0002-lazy-docs-modules.patch", "botocore/0001-lazy-docs-modules.patch"],
    "dateutil.parser (botocore)": ["botocore/0002-lazy-dateutil-parser.patch"],
    "importlib.metadata (urllib3 http2)": ["urllib3/0001-lazy-importlib-metadata-in-http2.patch"],
    "IPv6 patterns (urllib3)": ["urllib3/0002-ipv6-patterns-at-first-use.patch"],
    "stdlib imports + IPv6 pattern (botocore)": [
        "botocore/0003-lazy-ipv6-pattern-and-stdlib-imports.patch"],
}

# What each lever keeps out of the first client, as a function that uses it imports it: modules, or
# "module:attribute" for a pattern compiled at its first use (reading the attribute compiles it).
DEFERRED = [("s3transfer", ["boto3.s3.transfer"]), ("docs modules", ["botocore.docs.service", "boto3.docs.service"]),
            ("dateutil.parser", ["dateutil.parser"]), ("importlib.metadata", ["importlib.metadata"]),
            ("IPv6 patterns", ["urllib3.util.url:_IPV6_RE", "urllib3.util.url:_IPV6_ADDRZ_RE",
                               "urllib3.util.url:_BRACELESS_IPV6_ADDRZ_RE", "urllib3.util.url:_HOST_PORT_RE"]),
            ("stdlib imports + IPv6 pattern", ["botocore.compat:IPV6_ADDRZ_RE", "configparser", "pathlib"])]

HANDLER = '''
import json, os, resource, sys, time

def _depth():
    frame, depth = sys._getframe(), 0
    while frame is not None:
        depth, frame = depth + 1, frame.f_back
    return depth

DEFERRED = %r
_faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
_start = time.process_time()
import boto3
_imported = time.process_time()
boto3.client("dynamodb", region_name="us-east-1")
_client = time.process_time()
_faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - _faults
_modules = len(sys.modules)
# What a patch defers is paid at first use: each group's import CPU now (0 when already imported).
_deferred = {}
for _group, _names in DEFERRED:
    _before = time.process_time()
    for _name in _names:
        _module, _, _attribute = _name.partition(":")
        _module = __import__(_module, fromlist=["_"])
        if _attribute:
            getattr(_module, _attribute)
    _deferred[_group] = (time.process_time() - _before) * 1e3
with open(os.environ["SDK_PATCHES_OUT"], "w") as _out:
    json.dump({"import_ms": (_imported - _start) * 1e3, "client_ms": (_client - _imported) * 1e3,
               "depth": _depth(), "minor_faults": _faults, "modules": _modules,
               "deferred_ms": _deferred, "boto3_file": boto3.__file__}, _out)
sys.stdout.flush()
os._exit(0)


def handler(event, context):
    return None
'''

# What a Lambda function's environment holds that matters here (lab/standin/lambda_env.BASE_ENV's).
BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin/:/bin", "LANG": "en_US.UTF-8", "TZ": ":UTC",
    "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "AKIDLABLABLABLABLAB0", "AWS_SECRET_ACCESS_KEY": "lab-secret-access-key",
    "AWS_SESSION_TOKEN": "lab-session-token", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "128",
    "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
}


def build_variant(uv, python, base, patch_ids, dest):
    """``dest``/python: the installed lock (``base``) with ``patch_ids`` applied, compiled by ``python``."""
    target = os.path.join(dest, "python")
    shutil.copytree(base, target, symlinks=True)
    by_id = {"%s/%s" % (patch["distribution"], patch["name"]): patch for patch in sdk_patches.load()}
    # At an offset: a lever alone, or all but one, lacks patches made before it to the same file.
    sdk_patches.apply_all(target, [by_id[patch_id] for patch_id in patch_ids], allow_offset=True)
    subprocess.run([python, "-m", "compileall", "-q", "--invalidation-mode", "unchecked-hash", target],
                   check=True, env={"PATH": BASE_ENV["PATH"], "PYTHONHASHSEED": "0"})
    return dest


def run_once(python, opt, task, home, out, mode):
    """One fresh process; returns the handler's measurement."""
    env = dict(BASE_ENV, HOME=home, SDK_PATCHES_OUT=out)
    if mode == "bootstrap":
        env.update(LAMBDA_TASK_ROOT=task, LAMBDA_RUNTIME_DIR=os.path.dirname(BOOTSTRAP), _HANDLER="handler.handler",
                   AWS_LAMBDA_RUNTIME_API="127.0.0.1:9")
        command = [python, BOOTSTRAP, "--opt", opt]
    else:
        command = [python, "-c", "import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]; import handler",
                   task, os.path.join(opt, "python")]
    if os.path.exists(out):
        os.remove(out)
    completed = subprocess.run(command, env=env, cwd=task, capture_output=True, text=True, timeout=120)
    if not os.path.exists(out):
        raise SystemExit("sdk_patches: %s run wrote nothing:\n%s%s" % (mode, completed.stdout, completed.stderr))
    with open(out) as handle:
        return json.load(handle)


def quartiles(values):
    ordered = sorted(values)
    if len(ordered) < 4:
        return 0.0
    q = statistics.quantiles(ordered, n=4)
    return q[2] - q[0]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True, help="the stand-in runtime's interpreter (.venv/lambda-3.12)")
    parser.add_argument("--uv", required=True)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--modes", default="bootstrap,top",
                        help="bootstrap (awslambdaric's import of the handler) and/or top (python -c)")
    parser.add_argument("--variants", default="",
                        help="comma-separated variant names to run (default: all; stock is always run)")
    parser.add_argument("--top-variants", default="all patches",
                        help="the variants also run in top mode (stock always; 'all': every variant)")
    parser.add_argument("--json", default=os.path.join(REPO, "build", "sdk-patches.json"))
    parser.add_argument("--work", default=None)
    args = parser.parse_args(argv)
    args.python = os.path.abspath(args.python)
    work = args.work or tempfile.mkdtemp(prefix="sdk-patches-")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    base = os.path.join(work, "base")
    subprocess.run([args.uv, "pip", "install", "--quiet", "--no-config", "--target", base, "--python", args.python,
                    "--require-hashes", "--no-deps", "--only-binary", ":all:", "-r", LOCK], check=True)
    shutil.rmtree(os.path.join(base, "bin"), ignore_errors=True)
    every = ["%s/%s" % (patch["distribution"], patch["name"]) for patch in sdk_patches.load()]
    variants = {"stock": []}
    variants.update(LEVERS)
    variants["all patches"] = every
    # Each lever left out of the rest: an edit whose saving depends on the others (the depth trap:
    # the same import at another data-stack offset) shows here.
    for lever, ids in LEVERS.items():
        variants["all but " + lever.split(" (")[0]] = [patch_id for patch_id in every if patch_id not in ids]
    if args.variants:
        wanted = {"stock"} | {name.strip() for name in args.variants.split(",")}
        variants = {name: ids for name, ids in variants.items() if name in wanted}
    opts = {name: build_variant(args.uv, args.python, base, ids, os.path.join(work, "v%d" % index))
            for index, (name, ids) in enumerate(variants.items())}
    task = os.path.join(work, "task")
    os.makedirs(task)
    with open(os.path.join(task, "handler.py"), "w") as handle:
        handle.write(HANDLER % (DEFERRED,))
    home = os.path.join(work, "home")
    os.makedirs(home)
    modes = [mode for mode in args.modes.split(",") if mode]
    top = {"stock"} | ({name.strip() for name in args.top_variants.split(",")} if args.top_variants != "all"
                       else set(variants))
    order = [(name, mode) for name in variants for mode in modes if mode != "top" or name in top]
    samples = {key: [] for key in order}
    randomizer = random.Random(36)
    for _ in range(args.rounds):
        randomizer.shuffle(order)
        for name, mode in order:
            samples[(name, mode)].append(run_once(args.python, opts[name], task, home,
                                                  os.path.join(work, "out.json"), mode))
    rows = []
    for mode in modes:
        stock = [s["import_ms"] + s["client_ms"] for s in samples[("stock", mode)]]
        for name in variants:
            if (name, mode) not in samples:
                continue
            runs = samples[(name, mode)]
            totals = [s["import_ms"] + s["client_ms"] for s in runs]
            rows.append({
                "mode": mode, "variant": name, "patches": variants[name], "depth": runs[0]["depth"],
                "modules": runs[0]["modules"],
                "deferred_min_ms": {group: round(min(s["deferred_ms"][group] for s in runs), 2)
                                    for group in runs[0]["deferred_ms"]},
                "import_min_ms": round(min(s["import_ms"] for s in runs), 2),
                "minor_faults_median": statistics.median(s["minor_faults"] for s in runs),
                "total_min_ms": round(min(totals), 2), "total_median_ms": round(statistics.median(totals), 2),
                "total_iqr_ms": round(quartiles(totals), 2),
                "saved_min_ms": round(min(stock) - min(totals), 2),
                "saved_median_ms": round(statistics.median(stock) - statistics.median(totals), 2),
                "runs": len(runs),
            })
    header = "%-9s %-36s %5s %7s %7s %9s %9s %7s %9s %9s" % (
        "mode", "variant", "depth", "modules", "faults", "min ms", "median ms", "iqr", "saved min", "saved med")
    print(header)
    for row in rows:
        print("%-9s %-36s %5d %7d %7d %9.1f %9.1f %7.1f %9.1f %9.1f" % (
            row["mode"], row["variant"], row["depth"], row["modules"], row["minor_faults_median"],
            row["total_min_ms"], row["total_median_ms"],
            row["total_iqr_ms"], row["saved_min_ms"], row["saved_median_ms"]))
    write_rows(args.json, rows, python=interpreter_version(args.python), rounds=args.rounds,
               measure="process CPU of import boto3 + boto3.client('dynamodb') in the handler module")
    print("rows: %s" % os.path.relpath(args.json, REPO))
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)


def view(data):
    """docs/sdk-patches.md: per variant and import depth, the first client's CPU and what it saved
    (make docs renders it from docs/data/sdk-patches.json)."""
    run = data["sdk-patches"]
    lines = ["| import | variant | modules | CPU min | CPU median (IQR) | saved vs stock: min / median "
             "| minor faults | paid at first use |", "|---|---|---|---|---|---|---|---|"]
    stock = {row["mode"]: sum(row["deferred_min_ms"].values()) for row in run["rows"] if row["variant"] == "stock"}
    for row in run["rows"]:
        later = sum(row["deferred_min_ms"].values()) - stock[row["mode"]]
        where = "awslambdaric (depth %d)" % row["depth"] if row["mode"] == "bootstrap" else "top level (depth %d)" % (
            row["depth"])
        saved = "—" if row["variant"] == "stock" else "%+.1f / %+.1f ms" % (row["saved_min_ms"],
                                                                             row["saved_median_ms"])
        lines.append("| %s | %s | %d | %.1f ms | %.1f ms (%.1f) | %s | %d | %s |" % (
            where, row["variant"], row["modules"], row["total_min_ms"], row["total_median_ms"], row["total_iqr_ms"],
            saved, row["minor_faults_median"], "—" if row["variant"] == "stock" else "%.1f ms" % later))
    return "CPython %s, %d interleaved rounds; process CPU of `import boto3` + `boto3.client(\"dynamodb\")` " \
           "in the handler module.\n\n%s" % (run["python"], run["rounds"], "\n".join(lines))


if __name__ == "__main__":
    main()
