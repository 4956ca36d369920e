"""Cold start with and without the layer's shipped bytecode, the layer read-only as on Lambda.

    python bench/coldstart.py --zip build/layer.zip --python PY [--python PY ...] [--runs N]
    (or: make coldstart)

The zip is extracted twice: as built, and with every ``__pycache__`` removed.  On Lambda ``/opt``
is read-only, so Python cannot cache what it compiles: without shipped bytecode it recompiles
boto3/botocore at every cold start.  To model that faithfully both trees are bind-mounted
read-only in a private mount namespace (``unshare -m``, needs root); where that is not possible
the children run with PYTHONDONTWRITEBYTECODE=1 instead, which has the same effect on Python.
The script checks afterwards that no bytecode was written.

Each measurement is a fresh interpreter doing what a function's cold start does: add the layer as
the runtime does (``site.addsitedir``, which runs the layer's ``.pth`` with AWS_PYTHON_KEEPALIVE=1),
``import boto3`` and create the first client.  Reported: the median of that in-process time and of
the whole process's wall time, per interpreter; runs with and without bytecode are interleaved so
that drift affects both alike.  A benchmark, not a test: numbers depend on the machine.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

# As the runtime's bootstrap does: the layer folder first on sys.path, then addsitedir (runs .pth).
CHILD = """
import time
started = time.perf_counter()
import site, sys
sys.path.insert(0, %(layer)r)
site.addsitedir(%(layer)r)
import boto3
boto3.client("dynamodb", region_name="us-east-1")
elapsed = (time.perf_counter() - started) * 1000
assert boto3.__file__.startswith(%(layer)r), boto3.__file__
print(elapsed)
"""


def prepare(zip_path, root):
    """Two extracted trees: 'pyc' (as shipped) and 'nopyc' (every __pycache__ removed)."""
    trees = {}
    for variant in ("pyc", "nopyc"):
        folder = os.path.join(root, variant)
        with zipfile.ZipFile(zip_path) as archive:
            archive.extractall(folder)
        if variant == "nopyc":
            for parent, dirs, _ in os.walk(folder):
                if "__pycache__" in dirs:
                    shutil.rmtree(os.path.join(parent, "__pycache__"))
                    dirs.remove("__pycache__")
        trees[variant] = folder
    return trees


def count_pyc(folder):
    return sum(name.endswith(".pyc") for _, _, files in os.walk(folder) for name in files)


def child_env(extra):
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "AWS_PYTHON_KEEPALIVE": "1",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    env.update(extra)
    return env


def measure(python, tree, extra_env):
    code = CHILD % {"layer": os.path.join(tree, "python")}
    started = time.perf_counter()
    completed = subprocess.run([python, "-c", code], capture_output=True, text=True, env=child_env(extra_env))
    wall = (time.perf_counter() - started) * 1000
    if completed.returncode != 0:
        raise SystemExit("coldstart: %s failed:\n%s" % (python, completed.stderr))
    return float(completed.stdout.strip().splitlines()[-1]), wall


def version_of(python):
    return subprocess.run([python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                          capture_output=True, text=True, check=True).stdout.strip()


def run(args, trees, extra_env, mode):
    print("read-only model: %s; %d runs each (after %d warm-up)" % (mode, args.runs, args.warmup))
    print("%-8s %28s %28s %8s" % ("CPython", "with .pyc: import+client/process", "without .pyc: import+client/process",
                                  "saved"))
    before = {variant: count_pyc(tree) for variant, tree in trees.items()}
    for python in args.python:
        samples = {"pyc": [], "nopyc": []}
        for index in range(args.warmup + args.runs):
            for variant in ("pyc", "nopyc"):
                result = measure(python, trees[variant], extra_env)
                if index >= args.warmup:
                    samples[variant].append(result)
        medians = {
            variant: (statistics.median(s[0] for s in values), statistics.median(s[1] for s in values))
            for variant, values in samples.items()
        }
        print("%-8s %17.0f ms / %4.0f ms %21.0f ms / %4.0f ms %5.0f ms" % (
            version_of(python), medians["pyc"][0], medians["pyc"][1], medians["nopyc"][0], medians["nopyc"][1],
            medians["nopyc"][0] - medians["pyc"][0]))
    after = {variant: count_pyc(tree) for variant, tree in trees.items()}
    if after != before:
        raise SystemExit("coldstart: bytecode was written into the layer (%s -> %s): not read-only" % (before, after))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zip", required=True)
    parser.add_argument("--python", action="append", required=True, help="interpreter to measure")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--inside", help=argparse.SUPPRESS)  # set when re-executed under unshare
    args = parser.parse_args(argv)

    if args.inside:
        # In our private mount namespace: make both trees read-only, then measure.
        trees = {variant: os.path.join(args.inside, variant) for variant in ("pyc", "nopyc")}
        subprocess.run(["mount", "--make-rprivate", "/"], check=True)
        for tree in trees.values():
            subprocess.run(["mount", "--bind", tree, tree], check=True)
            subprocess.run(["mount", "-o", "remount,bind,ro", tree], check=True)
        run(args, trees, {}, "read-only bind mount (unshare -m)")
        return

    root = tempfile.mkdtemp(prefix="coldstart-")
    try:
        trees = prepare(args.zip, root)
        print("layer: %s (%d .pyc shipped)" % (args.zip, count_pyc(trees["pyc"])))
        probe = subprocess.run(["unshare", "-m", "true"], capture_output=True) if shutil.which("unshare") else None
        if probe is not None and probe.returncode == 0:
            command = [sys.executable, os.path.abspath(__file__), "--inside", root, "--zip", args.zip,
                       "--runs", str(args.runs), "--warmup", str(args.warmup)]
            for python in args.python:
                command += ["--python", python]
            subprocess.run(["unshare", "-m", *command], check=True)
        else:
            run(args, trees, {"PYTHONDONTWRITEBYTECODE": "1"}, "PYTHONDONTWRITEBYTECODE=1 (no unshare)")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
