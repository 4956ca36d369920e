"""Cold start: the layer's boto3 against the runtime's own copy, per CPython, read-only as on Lambda.

    PYTHONPATH=. python bench/coldstart.py --zip build/layer.zip --hook-zip build/layer-hook.zip \
        --python 3.12=/path/python3 [...] [--runs N] [--json build/coldstart.json]   (or: make coldstart)

What a user compares is not "the layer with or without its bytecode" but "attaching the layer or
not": without it, the function imports the runtime's bundled boto3, compiled, from site-packages.
So, per CPython, five ways of importing boto3 in a fresh interpreter (the same base interpreter
for all five, ``-s``):

* ``runtime_copy``: the stand-in runtime's site-packages (``.venv/lambda-3.X``, made by
  lab/standin/runtime_prefix.py: the runtime-kind boto3 of RUNTIME_BOTO3, default 1.42.97, and
  awslambdaric), copied and compiled with compileall as pip and the runtime images compile it;
* ``hook_layer``: the hook-only flavor (``make layer FLAVOR=hook``, build/layer-hook.zip) added as
  the runtime adds /opt/python, in front of the runtime copy, switch on: the function keeps the
  runtime's boto3 and the hook patches it;
* ``layer`` (b): the layer zip as built, with its bytecode, added as the runtime adds /opt/python
  (``sys.path`` first, then ``site.addsitedir``, which runs the ``.pth``), switch off;
* ``layer_on`` (c): the same, ``AWS_PYTHON_KEEPALIVE=1``;
* ``layer_no_bytecode`` (d): the layer with every ``__pycache__`` removed, switch off.

Each child times ``import boto3`` + the first DynamoDB client (``*_ms``), then one call to a local
DynamoDB-shaped endpoint (tests/hook/ddb_server.py, plain HTTP on loopback; ``*_call_ms`` is the
time from the start up to the answer).  The client is created with ``endpoint_url`` pointing at it.
Rounds are interleaved (every variant once per round) so drift on a shared machine hits all alike;
the first ``--warmup`` rounds are dropped; medians are reported, and beside them the minimum (the
least disturbed run: on a machine shared with other work the minimum compares code paths best) and
the ratios of the median CPU time of the same span (``*_cpu_ms``, ``time.process_time()`` in the
child: what the child itself ran, which other processes' load barely moves, unlike wall time).

Read-only: on Lambda /opt and the runtime are read-only, so nothing compiled at import is cached.
``--memory-mb N`` runs every child at that Lambda memory size's CPU share (a cgroup CPU quota,
lab/standin/cpu_share.py; 1769 MB = 1 vCPU), as the function's init would run on Lambda; default: full CPU.

All trees live under one folder that is bind-mounted read-only in a private mount namespace
(``unshare -m``, needs root; chmod would not stop root).  Without unshare the children run with
PYTHONDONTWRITEBYTECODE=1, which has the same effect on Python.  Afterwards the script checks that
no ``.pyc`` was written.  A benchmark, not a test: numbers depend on the machine.
"""

import argparse
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import zipfile

from rows import write_rows  # bench/rows.py, next to this script

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VARIANTS = ("runtime_copy", "hook_layer", "layer", "layer_on", "layer_no_bytecode")

# As the runtime's bootstrap does for a layer: its folder first on sys.path, then addsitedir
# (which runs the .pth); the runtime copy is simply on sys.path, as site-packages is.
CHILD = """
import time
started, cpu_started = time.perf_counter(), time.process_time()
import site, sys
for folder in reversed(%(path)r):
    sys.path.insert(0, folder)
if %(layer)r:
    site.addsitedir(%(layer)r)
import boto3
client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=%(url)r)
created, cpu_created = time.perf_counter(), time.process_time()
client.list_tables()
answered = time.perf_counter()
assert boto3.__file__.startswith(%(boto3_root)r), boto3.__file__
print((created - started) * 1000, (answered - started) * 1000, (cpu_created - cpu_started) * 1000)
"""


def load_ddb_server():
    spec = importlib.util.spec_from_file_location("ddb_server", os.path.join(REPO, "tests", "hook", "ddb_server.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.DynamoDBShapedServer


def remove_bytecode(folder):
    for parent, dirs, _ in os.walk(folder):
        if "__pycache__" in dirs:
            shutil.rmtree(os.path.join(parent, "__pycache__"))
            dirs.remove("__pycache__")


def count_pyc(folder):
    return sum(name.endswith(".pyc") for _, _, files in os.walk(folder) for name in files)


def prepare(zip_path, pythons, root, hook_zip=None):
    """Under root: layer/ (as built), layer_nopyc/, hook/ (the hook flavor's zip), runtime-3.X/ per
    interpreter."""
    for name, path in (("layer", zip_path), ("layer_nopyc", zip_path), ("hook", hook_zip)):
        if path:
            with zipfile.ZipFile(path) as archive:
                archive.extractall(os.path.join(root, name))
    remove_bytecode(os.path.join(root, "layer_nopyc"))
    for minor, python in pythons:
        runtime = os.path.join(root, "runtime-" + minor)
        shutil.copytree(runtime_site_packages(minor), runtime,
                        ignore=shutil.ignore_patterns("__pycache__", "pip", "pip-*"))
        subprocess.run([python, "-m", "compileall", "-q", "-j", "0", runtime], check=True)


def runtime_site_packages(minor):
    """site-packages of the lab's runtime stand-in for ``minor`` (created on first use)."""
    from lab.standin import runtime_prefix

    python = runtime_prefix.ensure(minor)  # <prefix>/bin/python
    return str(runtime_prefix.site_packages(python.parents[1], minor))


def child_setup(root, minor, variant):
    """(sys.path folders, folder given to addsitedir or None, where boto3 must come from, env)."""
    runtime = os.path.join(root, "runtime-" + minor)
    layer = os.path.join(root, "layer", "python")
    if variant == "runtime_copy":
        return [runtime], None, runtime, {}
    if variant == "hook_layer":
        hook = os.path.join(root, "hook", "python")
        return [hook, runtime], hook, runtime, {"AWS_PYTHON_KEEPALIVE": "1"}
    if variant == "layer_no_bytecode":
        layer = os.path.join(root, "layer_nopyc", "python")
    switch = {"AWS_PYTHON_KEEPALIVE": "1"} if variant == "layer_on" else {}
    return [layer], layer, layer, switch


def child_env(*extras):
    """A measured child's whole environment: no profile, no metadata lookups, dummy credentials,
    then ``extras`` in order (this machine exports AWS_* variables a child must not see)."""
    env = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_EC2_METADATA_DISABLED": "true",
        "AWS_ACCESS_KEY_ID": "AKIDCOLDSTART",
        "AWS_SECRET_ACCESS_KEY": "coldstart",
    }
    for extra in extras:
        env.update(extra)
    return env


def measure(python, minor, variant, root, url, extra_env, memory_mb=None):
    path, layer, boto3_root, switch = child_setup(root, minor, variant)
    env = child_env(switch, extra_env)
    code = CHILD % {"path": path, "layer": layer, "url": url, "boto3_root": boto3_root}
    command = [python, "-s", "-c", code]
    from lab.standin import cpu_share

    completed = cpu_share.run(command, memory_mb, capture_output=True, text=True, env=env,
                              timeout=120 if memory_mb is None else 600)
    if completed.returncode != 0:
        raise SystemExit("coldstart: %s %s failed:\n%s" % (minor, variant, completed.stderr))
    client_ms, call_ms, cpu_ms = completed.stdout.split()
    return float(client_ms), float(call_ms), float(cpu_ms)


def sdk_versions(root, minor):
    def version(folder):
        names = [n for n in os.listdir(folder) if n.startswith("botocore-") and n.endswith(".dist-info")]
        return names[0][len("botocore-"):-len(".dist-info")] if names else "?"
    return version(os.path.join(root, "runtime-" + minor)), version(os.path.join(root, "layer", "python"))


def run(args, pythons, root, extra_env, mode):
    before = count_pyc(root)
    print("read-only model: %s; median of %d rounds (after %d warm-up), fresh interpreter each; %s"
          % (mode, args.runs, args.warmup, "full CPU" if args.memory_mb is None else
             "each child at %d MB's CPU share (cgroup quota)" % args.memory_mb))
    server_class = load_ddb_server()
    rows = []
    with server_class() as server:
        for minor, python in pythons:
            samples = {variant: [] for variant in VARIANTS}
            for index in range(args.warmup + args.runs):
                for variant in VARIANTS:
                    result = measure(python, minor, variant, root, server.url, extra_env, args.memory_mb)
                    if index >= args.warmup:
                        samples[variant].append(result)
            runtime_sdk, layer_sdk = sdk_versions(root, minor)
            row = {"python": minor, "runtime_botocore": runtime_sdk, "layer_botocore": layer_sdk}
            for variant, values in samples.items():
                row[variant + "_ms"] = round(statistics.median(v[0] for v in values), 1)
                row[variant + "_min_ms"] = round(min(v[0] for v in values), 1)
                row[variant + "_call_ms"] = round(statistics.median(v[1] for v in values), 1)
                row[variant + "_cpu_ms"] = round(statistics.median(v[2] for v in values), 1)
            for variant in ("hook_layer", "layer"):
                row[variant + "_over_runtime"] = round(row[variant + "_ms"] / row["runtime_copy_ms"], 2)
                row[variant + "_over_runtime_min"] = round(row[variant + "_min_ms"] / row["runtime_copy_min_ms"], 2)
                row[variant + "_over_runtime_cpu"] = round(row[variant + "_cpu_ms"] / row["runtime_copy_cpu_ms"], 2)
            rows.append(row)
            print_row(row, header=len(rows) == 1)
    after = count_pyc(root)
    if after != before:
        raise SystemExit("coldstart: bytecode was written (%d -> %d .pyc): not read-only" % (before, after))
    return rows


def print_row(row, header):
    if header:
        print("import boto3 + first DynamoDB client, ms: median [minimum]; then + first call to a local endpoint")
        print("%-7s %-9s %14s %14s %14s %14s %16s %18s %18s | %s" % (
            "CPython", "runtime", "runtime copy", "hook layer on", "layer (off)", "layer on", "layer no .pyc",
            "hook/rt [min] cpu", "layer/rt [min] cpu",
            "first call: runtime copy, hook layer, layer, layer on, no .pyc"))
    cells = ["%5.0f [%5.0f]" % (row[v + "_ms"], row[v + "_min_ms"]) for v in VARIANTS]
    ratios = ["%4.2f [%4.2f] %4.2f" % (row[v + "_over_runtime"], row[v + "_over_runtime_min"],
                                       row[v + "_over_runtime_cpu"]) for v in ("hook_layer", "layer")]
    calls = ", ".join("%.0f" % row[v + "_call_ms"] for v in VARIANTS)
    print("%-7s %-9s %14s %14s %14s %14s %16s %18s %18s | %s" % (
        row["python"], row["runtime_botocore"], *cells, *ratios, calls))


def parse_pythons(values):
    pythons = []
    for value in values:
        minor, _, python = value.partition("=")
        if not python:
            raise SystemExit("coldstart: --python wants MINOR=INTERPRETER, got %r" % value)
        pythons.append((minor, python))
    return pythons


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zip", required=True)
    parser.add_argument("--hook-zip", required=True, help="the hook flavor (make layer FLAVOR=hook)")
    parser.add_argument("--python", action="append", required=True, help="MINOR=base interpreter, e.g. 3.12=...")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--json", help="write the rows here (make coldstart: build/coldstart.json)")
    parser.add_argument("--memory-mb", type=int, help="run each child at this memory size's CPU share")
    parser.add_argument("--inside", help=argparse.SUPPRESS)  # set when re-executed under unshare
    args = parser.parse_args(argv)
    pythons = parse_pythons(args.python)

    if args.inside:
        # In our private mount namespace: the whole tree read-only, then measure.
        subprocess.run(["mount", "--make-rprivate", "/"], check=True)
        subprocess.run(["mount", "--bind", args.inside, args.inside], check=True)
        subprocess.run(["mount", "-o", "remount,bind,ro", args.inside], check=True)
        rows = run(args, pythons, args.inside, {}, "read-only bind mount (unshare -m)")
    else:
        root = tempfile.mkdtemp(prefix="coldstart-")
        try:
            prepare(args.zip, pythons, root, args.hook_zip)
            print("layer: %s (%d .pyc shipped)" % (args.zip, count_pyc(os.path.join(root, "layer"))))
            probe = subprocess.run(["unshare", "-m", "true"], capture_output=True) if shutil.which("unshare") else None
            if probe is not None and probe.returncode == 0:
                command = [sys.executable, os.path.abspath(__file__), "--inside", root, "--zip", args.zip,
                           "--hook-zip", args.hook_zip, "--runs", str(args.runs), "--warmup", str(args.warmup)]
                command += ["--python=%s=%s" % pair for pair in pythons]
                if args.json:
                    command += ["--json", os.path.abspath(args.json)]
                if args.memory_mb is not None:
                    command += ["--memory-mb", str(args.memory_mb)]
                subprocess.run(["unshare", "-m", *command], check=True)
                return
            rows = run(args, pythons, root, {"PYTHONDONTWRITEBYTECODE": "1"}, "PYTHONDONTWRITEBYTECODE=1")
        finally:
            shutil.rmtree(root, ignore_errors=True)
    if args.json:
        write_rows(args.json, rows, memory_mb=args.memory_mb)


if __name__ == "__main__":
    main()
