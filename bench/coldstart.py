"""make coldstart: what a user waits for at a cold start, up to the first HTTPS response, with and
without the layer, at Lambda's CPU shares, page cache dropped before each run.

    PYTHONPATH=. python bench/coldstart.py --zip build/layer.zip --hook-zip build/layer-hook.zip \
        --python 3.12=/path/python3 [--memory-mb 128 --memory-mb 512 --memory-mb 1769] \
        [--runs N] [--json build/coldstart.json]                     (or: make coldstart)

What a user compares is attaching the layer or not. Three ways a function's cold start can go, each
in a fresh interpreter (the same base interpreter, ``-s``):

* ``runtime_copy``: no layer: the runtime's own boto3 (the lab's runtime-kind copy,
  lab/standin/runtime_prefix.py: RUNTIME_BOTO3, default 1.42.97 as lab/runtime-sdk/1.42.97.txt), copied
  from the stand-in's site-packages and compiled with compileall as pip and the runtime images do;
* ``layer``: the full layer (build/layer.zip: its own boto3/botocore and the hook, its shipped
  unchecked-hash bytecode), switch on (``AWS_PYTHON_KEEPALIVE=1``);
* ``hook_layer``: the hook flavor (build/layer-hook.zip) in front of the runtime copy, switch on: the
  function keeps the runtime's boto3 and the hook patches it.

A layer is added as the runtime's bootstrap adds /opt/python: first on ``sys.path``, then
``site.addsitedir`` (which runs its ``.pth``). Each child then times its parts, as the function's
init would run them:

* ``import``: the layer folder's ``site.addsitedir`` (nothing for the runtime copy) + ``import boto3``;
* ``client``: ``boto3.client("dynamodb", endpoint_url=<the TLS endpoint>)``;
* ``call``: the first ``ListTables``: the CA bundle or directory loaded, TCP + TLS handshake,
  botocore's first-call work, the answer.

``total`` is their sum, the function's own cold start (what the goals compare); ``process`` is the
whole span from before the parent's fork to the answer, interpreter start included (the same
interpreter for every column: it adds the same milliseconds to each).

The endpoint: a loopback TLS server answering DynamoDB-shaped calls (tests/hook/ddb_server.py) with a
``localhost`` certificate from a throwaway CA (trustme), run here, unthrottled. The trust store is
real-size: lab/standin/trust_store.py's bundle (the SDK's default bundle, 126 certificates, plus that CA),
given to every child as ``AWS_CA_BUNDLE``. On Lambda a function verifies against its SDK's default
bundle, which the layer knows by content and serves as a hashed CA directory built at layer build
time (issue 22 item 1, tools/packaging/ca_dir.py). The lab bundle stands in for it: it is the same size and
holds the lab's CA, so when the layer's build ships such directories (``aws_keepalive/ca/``) this
script adds one more, built the same way (tools/ca_dir.build) from the lab bundle, to its copy of
each layer: the layer then recognises the lab bundle as it recognises the SDK's on Lambda. The
runtime copy verifies against the same file, as stock botocore verifies against its own bundle.

As Lambda has it:

* **Cold page cache**: before every child, as root, ``sync`` and ``echo 3 > /proc/sys/vm/drop_caches``
  (the interpreter, the standard library, the SDK and the bundle are read from disk again, as on a
  new Lambda environment). When that is refused (not root, a container) the script says so in its
  header and in the JSON (``page_cache``), and measures with a warm cache.
* **CPU share**: every child in a cgroup CPU quota of its memory size (lab/standin/cpu_share.py; 1769 MB =
  one vCPU); ``--memory-mb`` repeatable (default 128, 512 and 1769). Needs root and cgroup v1.
* **Read-only**: all trees live under one folder bind-mounted read-only in a private mount namespace
  (``unshare -m``), as /opt and the runtime are read-only on Lambda: nothing compiled at import is
  cached (without unshare: PYTHONDONTWRITEBYTECODE=1, the same effect on Python). Afterwards the
  script checks that no ``.pyc`` was written.

Rounds are interleaved (every memory size and column once per round), so drift on a shared machine
falls on all alike; the first ``--warmup`` rounds are dropped; medians of ``--runs`` rounds, the
minimum beside them, and the child's CPU time (``time.process_time()``) for the same span, which
other processes' load moves far less than wall time. One JSON row per (CPython, memory size,
column), with ``*_over_runtime`` ratios. A benchmark, not a test: the numbers depend on the machine.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path[:0] = [p for p in (REPO, os.path.join(REPO, "tests", "hook"), HERE)
                if p not in sys.path]

from rows import write_rows  # noqa: E402  (bench/rows.py, next to this script)

VARIANTS = ("runtime_copy", "layer", "hook_layer")
LABELS = {"runtime_copy": "runtime copy", "layer": "full layer, on", "hook_layer": "hook flavor, on"}
PARTS = ("import", "client", "call")
MEMORY_MB = (128, 512, 1769)
DROP_CACHES = "/proc/sys/vm/drop_caches"

# The child: as the runtime's bootstrap adds a layer (its folder first on sys.path, then addsitedir,
# which runs the .pth), then the function's init. Times are perf_counter (CLOCK_MONOTONIC: the
# parent's clock too, so the parent can tell when the interpreter was ready).
CHILD = """
import time
started, cpu_started = time.perf_counter(), time.process_time()
import site, sys
for folder in reversed(%(path)r):
    sys.path.insert(0, folder)
if %(layer)r:
    site.addsitedir(%(layer)r)
import boto3
imported = time.perf_counter()
client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=%(url)r)
created = time.perf_counter()
client.list_tables()
answered, cpu_answered = time.perf_counter(), time.process_time()
assert boto3.__file__.startswith(%(boto3_root)r), boto3.__file__
import json, botocore
try:  # how the first call's pool verified: a CA directory (the layer knew the bundle), the bundle file
    # loaded per connection (stock), or nothing left to load (the layer loaded it into the context)
    pools = list(client._endpoint.http_session._manager.pools._container.values())
    verified = sorted({"directory" if getattr(p, "ca_cert_dir", None) else "file" if getattr(p, "ca_certs", None)
                       else "context" for p in pools})
except Exception as error:
    verified = ["? %%r" %% error]
print(json.dumps({"verified_with": verified,
                  "started": started, "imported": imported, "created": created, "answered": answered,
                  "cpu_s": cpu_answered - cpu_started, "botocore": botocore.__version__,
                  "python_version": sys.version.split()[0], "modules": sorted(sys.modules)}))
"""


def remove_bytecode(folder):
    for parent, dirs, _ in os.walk(folder):
        if "__pycache__" in dirs:
            shutil.rmtree(os.path.join(parent, "__pycache__"))
            dirs.remove("__pycache__")


def count_pyc(folder):
    return sum(name.endswith(".pyc") for _, _, files in os.walk(folder) for name in files)


def runtime_site_packages(minor):
    """site-packages of the lab's runtime stand-in for ``minor`` (created on first use)."""
    from lab.standin import runtime_prefix

    python = runtime_prefix.ensure(minor)  # <prefix>/bin/python
    return str(runtime_prefix.site_packages(python.parents[1], minor))


def prepare(zip_path, pythons, root, hook_zip=None):
    """Under root: layer/ (the zip as built), hook/ (the hook flavor's zip), runtime-3.X/ per
    interpreter (the stand-in's site-packages, compiled)."""
    for name, path in (("layer", zip_path), ("hook", hook_zip)):
        if path:
            with zipfile.ZipFile(path) as archive:
                archive.extractall(os.path.join(root, name))
    for minor, python in pythons:
        runtime = os.path.join(root, "runtime-" + minor)
        shutil.copytree(runtime_site_packages(minor), runtime,
                        ignore=shutil.ignore_patterns("__pycache__", "pip", "pip-*"))
        subprocess.run([python, "-m", "compileall", "-q", "-j", "0", runtime], check=True)


def know_bundle(root, bundle):
    """Give each layer copy under root the hashed CA directory of ``bundle``, built as the layer's
    build builds the SDK bundle's (tools/packaging/ca_dir.py), when that layer ships such directories.
    Returns what was done, for the header and the JSON."""
    done = []
    for name in ("layer", "hook"):
        ca_root = os.path.join(root, name, "python", "aws_keepalive", "ca")
        if not os.path.isdir(ca_root):
            done.append("%s: ships no CA directory (loads the bundle once per client)" % name)
            continue
        from tools.packaging import ca_dir  # tools/packaging/ca_dir.py

        directory = ca_dir.build(bundle, ca_root)
        done.append("%s: + %s (%d files, built from the lab bundle)" % (
            name, os.path.relpath(directory, root), len(os.listdir(directory))))
    return done


def child_setup(root, minor, variant):
    """(sys.path folders, folder given to addsitedir or None, where boto3 must come from, env)."""
    runtime = os.path.join(root, "runtime-" + minor)
    on = {"AWS_PYTHON_KEEPALIVE": "1"}
    if variant == "runtime_copy":
        return [runtime], None, runtime, {}
    if variant == "hook_layer":
        hook = os.path.join(root, "hook", "python")
        return [hook, runtime], hook, runtime, on
    if variant == "layer_zipped":  # bench/coldstart_parts.py's layout lever: dependencies in a zip
        layer = os.path.join(root, "layer_zipped", "python")
        return [os.path.join(root, "layer_zipped", "deps.zip"), layer], layer, layer, on
    layer = os.path.join(root, "layer", "python")
    return [layer], layer, layer, on


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


def drop_page_cache():
    """sync + drop the page cache (clean pages, dentries, inodes); None when done, else why not."""
    os.sync()
    try:
        with open(DROP_CACHES, "w") as control:
            control.write("3\n")
    except OSError as error:
        return "%s: %s" % (DROP_CACHES, error.strerror or error)
    return None


def measure(python, minor, variant, memory_mb, root, url, extra_env, drop, flags=(), wrapper=()):
    """One cold start: {part: ms}, the process span, CPU time; the page cache dropped first if ``drop``.
    ``flags`` go to the interpreter (``-X importtime``), ``wrapper`` in front of it (strace); the
    child's stderr and its sys.modules come back as ``stderr`` and ``modules``."""
    from lab.standin import cpu_share

    path, layer, boto3_root, switch = child_setup(root, minor, variant)
    code = CHILD % {"path": path, "layer": layer, "url": url, "boto3_root": boto3_root}
    if drop:
        refused = drop_page_cache()
        if refused:
            raise SystemExit("coldstart: could not drop the page cache: %s" % refused)
    spawned = time.perf_counter()
    done = cpu_share.run([*wrapper, python, "-s", *flags, "-c", code], memory_mb, capture_output=True, text=True,
                         env=child_env(switch, extra_env), timeout=600)
    if done.returncode != 0:
        raise SystemExit("coldstart: %s %s at %d MB failed:\n%s" % (minor, variant, memory_mb, done.stderr))
    child = json.loads(done.stdout.splitlines()[-1])
    return {
        "interpreter_ms": (child["started"] - spawned) * 1000,
        "import_ms": (child["imported"] - child["started"]) * 1000,
        "client_ms": (child["created"] - child["imported"]) * 1000,
        "call_ms": (child["answered"] - child["created"]) * 1000,
        "total_ms": (child["answered"] - child["started"]) * 1000,
        "process_ms": (child["answered"] - spawned) * 1000,
        "cpu_ms": child["cpu_s"] * 1000,
        "botocore": child["botocore"],
        "python_version": child["python_version"],
        "verified_with": "+".join(child["verified_with"]),
        "modules": child["modules"],
        "stderr": done.stderr,
    }


def summarise(minor, memory_mb, variant, samples):
    row = {"python": minor, "python_version": samples[0]["python_version"], "memory_mb": memory_mb,
           "variant": variant, "botocore": samples[0]["botocore"], "runs": len(samples),
           "verified_with": "/".join(sorted({s["verified_with"] for s in samples}))}
    for key in ("interpreter_ms", "import_ms", "client_ms", "call_ms", "total_ms", "process_ms", "cpu_ms"):
        row[key] = round(statistics.median(s[key] for s in samples), 1)
    row["total_min_ms"] = round(min(s["total_ms"] for s in samples), 1)
    return row


def add_ratios(rows):
    """``*_over_runtime``: each row's medians over the runtime copy's (same CPython, memory size)."""
    runtime = {(r["python"], r["memory_mb"]): r for r in rows if r["variant"] == "runtime_copy"}
    for row in rows:
        base = runtime[(row["python"], row["memory_mb"])]
        for key in ("total", "total_min", "process", "cpu", "import", "client", "call"):
            row[key + "_over_runtime"] = round(row[key + "_ms"] / base[key + "_ms"], 2) if base[key + "_ms"] else None


def run(args, pythons, root, url, bundle, extra_env, mode):
    before = count_pyc(root)
    drop = not args.warm_cache
    if drop:
        refused = drop_page_cache()
        if refused:
            print("coldstart: the page cache cannot be dropped here (%s): measuring with a WARM cache" % refused)
            drop, page_cache = False, "not dropped: " + refused
        else:
            page_cache = "dropped before each run (sync; echo 3 > %s)" % DROP_CACHES
    else:
        page_cache = "not dropped (--warm-cache)"
    from lab.standin import trust_store

    print("read-only model: %s; page cache %s; median of %d rounds (after %d warm-up), fresh interpreter "
          "each; memory sizes %s MB (cgroup CPU quota, 1769 MB = 1 vCPU); TLS endpoint %s, trust store %d "
          "certificates (AWS_CA_BUNDLE)" % (mode, page_cache, args.runs, args.warmup,
                                            "/".join(map(str, args.memory_mb)), url,
                                            trust_store.certificates(bundle)))
    samples = {}
    for index in range(args.warmup + args.runs):
        for minor, python in pythons:
            for memory_mb in args.memory_mb:
                for variant in VARIANTS:
                    result = measure(python, minor, variant, memory_mb, root, url,
                                     dict(extra_env, AWS_CA_BUNDLE=bundle), drop)
                    if index >= args.warmup:
                        samples.setdefault((minor, memory_mb, variant), []).append(result)
        print("  round %d/%d done (load %.1f)" % (index + 1, args.warmup + args.runs, os.getloadavg()[0]),
              flush=True)
    rows = [summarise(minor, memory_mb, variant, values) for (minor, memory_mb, variant), values in samples.items()]
    add_ratios(rows)
    after = count_pyc(root)
    if after != before:
        raise SystemExit("coldstart: bytecode was written (%d -> %d .pyc): not read-only" % (before, after))
    return rows, page_cache


def print_table(rows):
    print("cold start to the first HTTPS response, ms, median of each part; total = import + client + "
          "first call [minimum]; x runtime copy (total, CPU); process = fork to answer")
    print("%-7s %6s %-16s %-9s %8s %8s %8s %17s %8s %10s %9s  %s" % (
        "CPython", "MB", "column", "botocore", "import", "client", "call", "total [min]", "x rt",
        "x rt (cpu)", "process", "verified with"))
    for row in rows:
        print("%-7s %6d %-16s %-9s %8.0f %8.0f %8.0f %8.0f [%6.0f] %8.2f %10.2f %9.0f  %s" % (
            row["python"], row["memory_mb"], LABELS[row["variant"]], row["botocore"], row["import_ms"],
            row["client_ms"], row["call_ms"], row["total_ms"], row["total_min_ms"], row["total_over_runtime"],
            row["cpu_over_runtime"], row["process_ms"], row["verified_with"]))


def parse_pythons(values):
    pythons = []
    for value in values:
        minor, _, python = value.partition("=")
        if not python:
            raise SystemExit("coldstart: --python wants MINOR=INTERPRETER, got %r" % value)
        pythons.append((minor, python))
    return pythons


def make_trust(root):
    """Under root/trust/: a throwaway CA, a ``localhost`` certificate and key from it for the
    endpoint, and the lab's real-size trust store (the SDK's bundle + that CA). Written before the
    tree goes read-only; returns the bundle's path."""
    import trustme

    from lab.standin import trust_store

    folder = os.path.join(root, "trust")
    os.makedirs(folder)
    authority = trustme.CA()
    authority.issue_cert("localhost").private_key_and_cert_chain_pem.write_to_path(
        os.path.join(folder, "server.pem"))
    authority.cert_pem.write_to_path(os.path.join(folder, "lab-ca.pem"))
    return trust_store.sdk_bundle_with(os.path.join(folder, "lab-ca.pem"))


def endpoint(root):
    """The loopback TLS server answering DynamoDB-shaped calls, with root/trust/'s certificate."""
    import ssl

    from ddb_server import DynamoDBShapedServer

    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(root, "trust", "server.pem"))
    return DynamoDBShapedServer(tls_context=context)


def measure_and_write(args, pythons, root, extra_env, mode):
    from lab.standin import trust_store

    bundle = os.path.join(root, "trust", "lab-ca.pem.sdk.pem")
    with endpoint(root) as server:
        rows, page_cache = run(args, pythons, root, server.url, bundle, extra_env, mode)
    print_table(rows)
    if args.json:
        # bench/rows.py adds where and when (host, CPU, load at start and end, dates, command).
        write_rows(args.json, rows, page_cache=page_cache, read_only=mode, runs=args.runs, warmup=args.warmup,
                   trust_store_certificates=trust_store.certificates(bundle), layer_ca=args.layer_ca,
                   hook_prepared=hook_prepared(args.hook_zip))


def hook_prepared(hook_zip):
    """The botocore releases the hook zip has prepared data for (prepared-data/botocore-<v>.pickle):
    the runtime copy's release is one of them, or the hook flavor creates clients as stock does."""
    with zipfile.ZipFile(hook_zip) as archive:
        found = [re.fullmatch(r"python/aws_keepalive/prepared-data/botocore-(.+)\.pickle", name)
                 for name in archive.namelist()]
    return sorted((match.group(1) for match in found if match), key=lambda v: tuple(map(int, v.split("."))))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zip", required=True)
    parser.add_argument("--hook-zip", required=True, help="the hook flavor (make layer FLAVOR=hook)")
    parser.add_argument("--python", action="append", required=True, help="MINOR=base interpreter, e.g. 3.12=...")
    parser.add_argument("--memory-mb", type=int, action="append", help="Lambda memory size (repeat; default "
                        "128, 512, 1769): each child at its CPU share")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--warm-cache", action="store_true", help="do not drop the page cache")
    parser.add_argument("--json", help="write the rows here (make coldstart: build/coldstart.json)")
    parser.add_argument("--inside", help=argparse.SUPPRESS)  # set when re-executed under unshare
    parser.add_argument("--layer-ca", action="append", default=[], help=argparse.SUPPRESS)  # from outside
    args = parser.parse_args(argv)
    args.memory_mb = args.memory_mb or list(MEMORY_MB)
    pythons = parse_pythons(args.python)

    if args.inside:
        # In our private mount namespace: the whole tree read-only, then measure.
        subprocess.run(["mount", "--make-rprivate", "/"], check=True)
        subprocess.run(["mount", "--bind", args.inside, args.inside], check=True)
        subprocess.run(["mount", "-o", "remount,bind,ro", args.inside], check=True)
        measure_and_write(args, pythons, args.inside, {}, "read-only bind mount (unshare -m)")
        return
    root = tempfile.mkdtemp(prefix="coldstart-")
    try:
        prepare(args.zip, pythons, root, args.hook_zip)
        args.layer_ca = know_bundle(root, make_trust(root))
        print("layer: %s (%d .pyc shipped); hook flavor: %s" % (
            args.zip, count_pyc(os.path.join(root, "layer")), args.hook_zip))
        for line in args.layer_ca:
            print("CA directory for the lab bundle, %s" % line)
        probe = subprocess.run(["unshare", "-m", "true"], capture_output=True) if shutil.which("unshare") else None
        if probe is not None and probe.returncode == 0:
            command = [sys.executable, os.path.abspath(__file__), "--inside", root, "--zip", args.zip,
                       "--hook-zip", args.hook_zip, "--runs", str(args.runs), "--warmup", str(args.warmup)]
            command += ["--python=%s=%s" % pair for pair in pythons]
            command += ["--memory-mb=%d" % mb for mb in args.memory_mb]
            command += ["--layer-ca=" + line for line in args.layer_ca]
            command += ["--warm-cache"] if args.warm_cache else []
            command += ["--json", os.path.abspath(args.json)] if args.json else []
            subprocess.run(["unshare", "-m", *command], check=True)
            return
        measure_and_write(args, pythons, root, {"PYTHONDONTWRITEBYTECODE": "1"}, "PYTHONDONTWRITEBYTECODE=1")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
