"""make coldstart: what a user waits for at a cold start, up to the first HTTPS response, with and
without the layer, at Lambda's CPU shares, page cache dropped before each run, the handler imported
by awslambdaric as the managed runtime imports it.

    PYTHONPATH=. python bench/coldstart.py --zip build/layer.zip --hook-zip build/layer-hook.zip \
        --python 3.12=/path/python3 [--python 3.14=...] [--memory-mb 128 --memory-mb 512 ...] \
        [--runs N] [--json build/coldstart.json]                     (or: make coldstart)

What a user compares is attaching the layer or not. The columns, each a fresh execution environment:

* ``runtime_copy``: no layer: the runtime's own boto3 (the stand-in runtime's site-packages,
  lab/standin/runtime_prefix.py: RUNTIME_BOTO3, default 1.42.97 as lab/runtime-sdk/1.42.97.txt,
  compiled as the runtime images ship it);
* ``runtime_copy_again``: the same, measured again in the same round: two equal columns, whose
  difference is the noise of the run (see "No difference" below);
* ``layer``: the full layer (build/layer.zip: its own boto3/botocore and the hook, its shipped
  unchecked-hash bytecode) as /opt, switch on (``AWS_PYTHON_KEEPALIVE=1``);
* ``hook_layer``: the hook flavor (build/layer-hook.zip) as /opt, switch on: the function keeps the
  runtime's boto3 and the hook patches it.

Where the handler is imported matters (issue 36): the same ``import boto3`` costs CPU by how deep
in the call stack it runs, since CPython 3.11 keeps frames in a data stack of 16 KiB chunks, and an
import that pushes and pops frames across a chunk's end maps and unmaps a chunk each time. So each
child is the lab's stand-in runtime (lab/standin/runtime/bootstrap.py, the managed runtime's
/var/runtime/bootstrap.py steps) running **awslambdaric** (PyPI, lab/runtime-requirements.txt)
against a Runtime API (lab/standin/runtime_api.py) that has the first invocation queued, as Lambda
has when it starts an environment for it. awslambdaric imports the handler module with its own
call chain; that module (``FUNCTION`` below, the task root's only file) does what a function's
init does at module level (``import boto3``, ``boto3.client("dynamodb", endpoint_url=...)``), and
its handler makes the first call (``ListTables``). The module records where it was imported: the
Python frame depth and the frames' data-stack size (``stack_words``: each frame's locals, cells and
evaluation stack, in 8-byte words, without the ~10 words of frame header each), written to the JSON
and docs/coldstart.md.

Parts, timed inside the function's process:

* ``startup``: from the runtime's startup steps (lab/standin/runtime/startup.py ``run``: the layer
  folders on sys.path, ``site.addsitedir``, which runs the layer's ``.pth``) to the handler module's
  first line (awslambdaric's handler lookup);
* ``import``: ``import boto3``;
* ``client``: ``boto3.client("dynamodb", endpoint_url=<the TLS endpoint>)``;
* ``call``: awslambdaric fetching the invocation and the first ``ListTables``: the CA bundle or
  directory loaded, TCP + TLS handshake, botocore's first-call work, the answer.

``total`` is their sum (wall), the function's own cold start: what the goals compare; ``cpu`` is the
process's CPU time over the same span (``time.process_time()``); ``process`` is the whole span from
before the fork to the answer (interpreter start and awslambdaric's import included: the same for
every column) and ``process_cpu`` its CPU. The CPU is also taken by part (``startup_cpu``,
``import_cpu``, ``client_cpu``, ``call_cpu``) and, per run, for everything but the import
(``besides_import_cpu``): what the hook flavor, which keeps the runtime's ``import boto3``, can
change at all (docs/coldstart.md renders its budget from these).

As Lambda has it:

* **Cold page cache**: before every child, as root, ``sync`` and ``echo 3 > /proc/sys/vm/drop_caches``
  (the interpreter, the standard library, the SDK and the bundle are read from disk again, as on a
  new Lambda environment). When that is refused (not root, a container) the script says so in its
  header and in the JSON (``page_cache``), and measures with a warm cache.
* **CPU share**: every child in a cgroup CPU quota of its memory size (lab/standin/cpu_share.py; 1769 MB =
  one vCPU); ``--memory-mb`` repeatable (default 128, 512 and 1769). Needs root and cgroup v1.
* **Read-only**: the layer copies, the task root and the stand-in runtime's prefix are bind-mounted
  read-only in a private mount namespace (``unshare -m``), as /opt, /var/task and /var/lang are on
  Lambda: nothing compiled at import is cached. Afterwards the script checks that no ``.pyc`` was
  written under its tree.
* **TLS to a real-size trust store**: the endpoint is a loopback TLS server answering DynamoDB-shaped
  calls (tests/hook/ddb_server.py) with a ``localhost`` certificate from a throwaway CA (trustme),
  run here, unthrottled. Every child verifies against lab/standin/trust_store.py's bundle (the SDK's
  default bundle, 126 certificates, plus that CA), given as ``AWS_CA_BUNDLE``. On Lambda a function
  verifies against its SDK's default bundle, which the layer knows by content and serves as a hashed
  CA directory built at layer build time (tools/packaging/ca_dir.py); so when a layer ships such
  directories (``aws_keepalive/ca/``) this script adds one more, built the same way from the lab
  bundle, to its copy of that layer.

Rounds are interleaved (every CPython, memory size and column once per round, the columns in a
rotating order), so drift on a shared machine falls on all alike; the first ``--warmup`` rounds are
dropped; medians of ``--runs`` rounds, the minimum beside them. Spread: each column's ratio over the
runtime copy is also taken per round (both measured in the same round), and the interquartile range
of those ratios is the row's spread.

No difference: the two equal columns (``runtime_copy_again`` over ``runtime_copy``) show what the run
calls a difference when there is none. For each CPython and memory size, ``noise`` (wall) and
``noise_cpu`` are the larger of their median ratio's distance from 1 and half their per-round ratios'
interquartile range; a column whose ratio is within that of 1.00 has ``*_difference: false``, and the
renderer prints "no difference" instead of a ratio. One JSON row per (CPython, memory size, column),
with ``*_over_runtime`` ratios. A benchmark, not a test: the numbers depend on the machine.
"""

import argparse
import json
import os
import re
import shutil
import signal
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

VARIANTS = ("runtime_copy", "runtime_copy_again", "hook_layer", "layer")
LABELS = {"runtime_copy": "runtime copy", "runtime_copy_again": "runtime copy, again", "layer": "full layer, on",
          "hook_layer": "hook flavor, on"}
PARTS = ("startup", "import", "client", "call")
# The /opt of each column (a folder under the measured tree; "no-layer" is empty).
OPT = {"runtime_copy": "no-layer", "runtime_copy_again": "no-layer", "layer": "layer", "hook_layer": "hook"}
TASK = "task"  # the task root's folder under the measured tree: FUNCTION as FUNCTION_MODULE.py
FUNCTION_MODULE = "coldstart_function"
MEMORY_MB = (128, 512, 1769)
DROP_CACHES = "/proc/sys/vm/drop_caches"

# The function awslambdaric imports (the task root's only module). Its module level is the init a
# function does; the handler, the first call. Times are perf_counter (CLOCK_MONOTONIC: the parent's
# clock too) and process_time; startup.STARTED is when the stand-in runtime began its startup steps.
FUNCTION = """
import os
import sys
import time

import startup  # the stand-in runtime's own module (its bootstrap imported it): when startup began

top, cpu_top = time.perf_counter(), time.process_time()
# Where awslambdaric imports this module: the Python frames on the stack and their data-stack
# words (locals + cells + evaluation stack; the ~10 words of each frame's header not counted).
frame, depth, stack_words = sys._getframe(), 0, 0
while frame is not None:
    code = frame.f_code
    depth += 1
    stack_words += code.co_stacksize + code.co_nlocals + len(code.co_cellvars) + len(code.co_freevars)
    frame = frame.f_back
del frame, code
import boto3

imported, cpu_imported = time.perf_counter(), time.process_time()
client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=os.environ["COLDSTART_ENDPOINT"])
created, cpu_created = time.perf_counter(), time.process_time()


def handler(event, context):
    client.list_tables()
    answered, cpu_answered = time.perf_counter(), time.process_time()
    import botocore

    try:  # how the first call's pool verified: a CA directory (the layer knew the bundle), the bundle
        # file loaded per connection (stock), or nothing left to load (loaded into the context)
        pools = list(client._endpoint.http_session._manager.pools._container.values())
        verified = sorted({"directory" if getattr(p, "ca_cert_dir", None) else "file" if getattr(p, "ca_certs", None)
                           else "context" for p in pools})
    except Exception as error:
        verified = ["? %r" % error]
    return {"verified_with": verified, "boto3_file": boto3.__file__, "depth": depth, "stack_words": stack_words,
            "started": startup.STARTED[0], "cpu_started": startup.STARTED[1], "top": top, "cpu_top": cpu_top,
            "imported": imported, "cpu_imported": cpu_imported, "created": created, "cpu_created": cpu_created,
            "answered": answered, "cpu_answered": cpu_answered,
            "botocore": botocore.__version__, "python_version": sys.version.split()[0]}
"""

# bench/coldstart_parts.py's child (make coldstart-parts: -X importtime and strace per column): the
# function's init run by ``python -c`` at the top of the stack, not by awslambdaric.
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


def prepare(zip_path, pythons, root, hook_zip=None, runtime_copies=True):
    """Under root: layer/ (the zip as built), hook/ (the hook flavor's zip), no-layer/ (an empty /opt),
    task/ (the function), and with ``runtime_copies`` runtime-3.X/ per interpreter (the stand-in's
    site-packages, compiled: bench/coldstart_parts.py's children)."""
    for name, path in (("layer", zip_path), ("hook", hook_zip)):
        if path:
            with zipfile.ZipFile(path) as archive:
                archive.extractall(os.path.join(root, name))
    os.makedirs(os.path.join(root, OPT["runtime_copy"]))
    os.makedirs(os.path.join(root, TASK))
    with open(os.path.join(root, TASK, FUNCTION_MODULE + ".py"), "w") as out:
        out.write(FUNCTION)
    for minor, python in pythons if runtime_copies else ():
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


def parse_columns(values):
    """``--column NAME=BASE,VAR=VALUE,...``: an extra column measured like BASE (one of VARIANTS) with
    these variables set (e.g. ``layer_gc=layer,AWS_PYTHON_KEEPALIVE_GC_INIT=1``: what one lever saves,
    side by side). Returns {name: (base, {var: value})}; LABELS and OPT learn the names."""
    columns = {}
    for value in values:
        name, _, spec = value.partition("=")
        base, *pairs = spec.split(",")
        if not name or base not in VARIANTS or not all("=" in pair for pair in pairs):
            raise SystemExit("coldstart: --column wants NAME=BASE,VAR=VALUE,... (BASE one of %s), got %r"
                             % ("/".join(VARIANTS), value))
        columns[name] = (base, dict(pair.split("=", 1) for pair in pairs))
        OPT[name] = OPT[base]
        LABELS[name] = "%s, %s" % (LABELS[base], " ".join(pairs))
    return columns


def measure_lambda(python, minor, variant, memory_mb, root, url, bundle, drop, extra_env=None):
    """One cold start through awslambdaric (the stand-in runtime, ``python`` its interpreter), the first
    invocation queued before the process starts: {part: ms}, CPU times, where the handler was imported."""
    from lab.standin import cpu_share, lambda_env
    from lab.standin.runtime_api import RuntimeApi

    env = dict(lambda_env.BASE_ENV)
    env.update({
        "AWS_EXECUTION_ENV": "AWS_Lambda_python" + minor,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(memory_mb),
        "LAMBDA_TASK_ROOT": os.path.join(root, TASK),
        "LAMBDA_RUNTIME_DIR": str(lambda_env.RUNTIME_DIR),
        "_HANDLER": FUNCTION_MODULE + ".handler",
        # No profile file on Lambda (this machine's must not be read), nor a metadata lookup.
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_CA_BUNDLE": bundle,
        "COLDSTART_ENDPOINT": url,
    })
    if OPT[variant] != "no-layer":
        env["AWS_PYTHON_KEEPALIVE"] = "1"
    env.update(extra_env or {})
    command = [python, str(lambda_env.RUNTIME_DIR / "bootstrap.py"), "--opt", os.path.join(root, OPT[variant])]
    with RuntimeApi() as api, tempfile.TemporaryFile() as stderr:
        env["AWS_LAMBDA_RUNTIME_API"] = api.address
        invocation = api.queue({}, timeout=600)
        if drop:
            refused = drop_page_cache()
            if refused:
                raise SystemExit("coldstart: could not drop the page cache: %s" % refused)
        with cpu_share.Quota(memory_mb) as quota:
            spawned = time.perf_counter()
            process = subprocess.Popen(quota.prefix() + command, env=env, cwd=env["LAMBDA_TASK_ROOT"],
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
                                       start_new_session=True)
            try:
                outcome, _ = api.wait(invocation, 600)
            finally:
                try:
                    os.killpg(process.pid, signal.SIGKILL)  # its own session: the group is the process
                except ProcessLookupError:
                    pass
                process.wait()
        stderr.seek(0)
        errors = stderr.read().decode(errors="replace")
    child = outcome.body
    if not outcome.ok or not isinstance(child, dict):
        raise SystemExit("coldstart: %s %s at %d MB: %s %r\n%s" % (minor, variant, memory_mb, outcome.kind,
                                                                    child, errors[-3000:]))
    expected = os.path.join(root, "layer") if OPT[variant] == "layer" else os.path.dirname(os.path.dirname(python))
    if not child["boto3_file"].startswith(expected):
        raise SystemExit("coldstart: %s imported boto3 from %s" % (variant, child["boto3_file"]))
    cpu_ms = (child["cpu_answered"] - child["cpu_started"]) * 1000
    import_cpu_ms = (child["cpu_imported"] - child["cpu_top"]) * 1000
    return {
        "interpreter_ms": (child["started"] - spawned) * 1000,
        "startup_ms": (child["top"] - child["started"]) * 1000,
        "import_ms": (child["imported"] - child["top"]) * 1000,
        "client_ms": (child["created"] - child["imported"]) * 1000,
        "call_ms": (child["answered"] - child["created"]) * 1000,
        "total_ms": (child["answered"] - child["started"]) * 1000,
        "process_ms": (child["answered"] - spawned) * 1000,
        "cpu_ms": cpu_ms,
        # The same span's CPU by part (what a flavor can change is not the same in each), and the
        # parts other than the import together, per run: a median of sums, not a sum of medians.
        "startup_cpu_ms": (child["cpu_top"] - child["cpu_started"]) * 1000,
        "import_cpu_ms": import_cpu_ms,
        "client_cpu_ms": (child["cpu_created"] - child["cpu_imported"]) * 1000,
        "call_cpu_ms": (child["cpu_answered"] - child["cpu_created"]) * 1000,
        "besides_import_cpu_ms": cpu_ms - import_cpu_ms,
        "process_cpu_ms": child["cpu_answered"] * 1000,
        "botocore": child["botocore"],
        "python_version": child["python_version"],
        "verified_with": "+".join(child["verified_with"]),
        "depth": child["depth"],
        "stack_words": child["stack_words"],
        "stderr": errors,
    }


MEDIANS = ("interpreter_ms", "startup_ms", "import_ms", "client_ms", "call_ms", "total_ms", "process_ms", "cpu_ms",
           "process_cpu_ms", "startup_cpu_ms", "import_cpu_ms", "client_cpu_ms", "call_cpu_ms", "besides_import_cpu_ms")


def quartiles(values):
    """(first, third) quartile of ``values`` (the value itself for one)."""
    if len(values) < 2:
        return values[0], values[0]
    first, _, third = statistics.quantiles(values, n=4, method="inclusive")
    return first, third


def summarise(minor, memory_mb, variant, samples, base=None):
    """One row: medians of ``samples`` (one per round); with ``base``, the runtime copy's samples of
    the same rounds, the per-round ratios' interquartile range (``*_ratio_iqr``)."""
    row = {"python": minor, "python_version": samples[0]["python_version"], "memory_mb": memory_mb,
           "variant": variant, "botocore": samples[0]["botocore"], "runs": len(samples),
           "verified_with": "/".join(sorted({s["verified_with"] for s in samples}))}
    for key in MEDIANS:
        if key in samples[0]:
            row[key] = round(statistics.median(s[key] for s in samples), 1)
    row["total_min_ms"] = round(min(s["total_ms"] for s in samples), 1)
    for key in ("depth", "stack_words"):
        if key in samples[0]:
            row[key] = sorted({s[key] for s in samples})
    if base is not None:
        for metric in ("total", "cpu"):
            ratios = [s[metric + "_ms"] / b[metric + "_ms"] for s, b in zip(samples, base)]
            row[metric + "_ratio_iqr"] = [round(q, 3) for q in quartiles(ratios)]
    return row


def add_ratios(rows):
    """``*_over_runtime``: each row's medians over the runtime copy's (same CPython, memory size); then,
    where the run has the equal column (``runtime_copy_again``), the noise and, per row and metric
    (wall total, CPU), whether its ratio is a difference (see the module docstring)."""
    runtime = {(r["python"], r["memory_mb"]): r for r in rows if r["variant"] == "runtime_copy"}
    again = {(r["python"], r["memory_mb"]): r for r in rows if r["variant"] == "runtime_copy_again"}
    for row in rows:
        base = runtime[(row["python"], row["memory_mb"])]
        for key in ("total", "total_min", "process", "cpu", "process_cpu", "startup", "import", "client", "call"):
            if key + "_ms" in row:
                denominator = base[key + "_ms"]
                row[key + "_over_runtime"] = round(row[key + "_ms"] / denominator, 2) if denominator else None
    for row in rows:
        equal = again.get((row["python"], row["memory_mb"]))
        if equal is None:
            continue
        for metric, over in (("total", "total_over_runtime"), ("cpu", "cpu_over_runtime")):
            low, high = equal.get(metric + "_ratio_iqr", (1.0, 1.0))
            noise = round(max(abs(equal[over] - 1), (high - low) / 2), 3)
            row["noise" if metric == "total" else "noise_cpu"] = noise
            if row["variant"] not in ("runtime_copy", "runtime_copy_again"):
                row[metric + "_difference"] = abs(row[over] - 1) > noise


def run(args, pythons, root, url, bundle, mode):
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

    print("read-only model: %s; page cache %s; median of %d rounds (after %d warm-up), a fresh stand-in runtime "
          "(awslambdaric) each; memory sizes %s MB (cgroup CPU quota, 1769 MB = 1 vCPU); TLS endpoint %s, trust "
          "store %d certificates (AWS_CA_BUNDLE)" % (mode, page_cache, args.runs, args.warmup,
                                                     "/".join(map(str, args.memory_mb)), url,
                                                     trust_store.certificates(bundle)), flush=True)
    samples = {}
    for index in range(args.warmup + args.runs):
        for minor, python in pythons:
            for memory_mb in args.memory_mb:
                # A rotating order: no column always runs right after another one.
                names = list(VARIANTS) + list(args.columns)
                turn = index % len(names)
                for variant in names[turn:] + names[:turn]:
                    result = measure_lambda(python, minor, variant, memory_mb, root, url, bundle, drop,
                                            args.columns.get(variant, (None, {}))[1])
                    if index >= args.warmup:
                        samples.setdefault((minor, memory_mb, variant), []).append(result)
        print("  round %d/%d done (load %.1f)" % (index + 1, args.warmup + args.runs, os.getloadavg()[0]),
              flush=True)
    rows = [summarise(minor, memory_mb, variant, values, samples[minor, memory_mb, "runtime_copy"])
            for (minor, memory_mb, variant), values in samples.items()]
    add_ratios(rows)
    after = count_pyc(root)
    if after != before:
        raise SystemExit("coldstart: bytecode was written (%d -> %d .pyc): not read-only" % (before, after))
    return rows, page_cache


def ratio_text(row, metric):
    """A ratio as the tables print it: "no difference" within the run's noise."""
    over = row["total_over_runtime" if metric == "total" else "cpu_over_runtime"]
    if row.get(metric + "_difference") is False:
        return "no difference"
    low, high = row.get(metric + "_ratio_iqr", (over, over))
    return "%.2f (%.2f-%.2f)" % (over, low, high)


def print_table(rows):
    print("cold start to the first HTTPS response through awslambdaric, ms, median of each part; total = "
          "startup + import + client + first call [minimum]; x runtime copy: median ratio (per-round "
          "interquartile range), 'no difference' within the equal columns' noise; cpu = the process's CPU "
          "over the total; process = fork to answer")
    print("%-7s %5s %-19s %-8s %7s %7s %7s %7s %15s %21s %7s %21s %8s  %s" % (
        "CPython", "MB", "column", "botocore", "startup", "import", "client", "call", "total [min]", "x rt (wall)",
        "cpu", "x rt (cpu)", "process", "verified with"))
    for row in rows:
        print("%-7s %5d %-19s %-8s %7.0f %7.0f %7.0f %7.0f %7.0f [%5.0f] %21s %7.0f %21s %8.0f  %s" % (
            row["python"], row["memory_mb"], LABELS[row["variant"]], row["botocore"], row["startup_ms"],
            row["import_ms"], row["client_ms"], row["call_ms"], row["total_ms"], row["total_min_ms"],
            ratio_text(row, "total"), row["cpu_ms"], ratio_text(row, "cpu"), row["process_ms"],
            row["verified_with"]))
    depths = sorted({(row["python"], d, w) for row in rows for d in row["depth"] for w in row["stack_words"]})
    print("handler imported by awslambdaric at: " + "; ".join(
        "%s: frame depth %d, %d data-stack words" % depth for depth in depths))


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


def measure_and_write(args, pythons, root, mode):
    from lab.standin import trust_store

    bundle = os.path.join(root, "trust", "lab-ca.pem.sdk.pem")
    with endpoint(root) as server:
        rows, page_cache = run(args, pythons, root, server.url, bundle, mode)
    print_table(rows)
    if args.json:
        # bench/rows.py adds where and when (host, CPU, load at start and end, dates, command).
        write_rows(args.json, rows, page_cache=page_cache, read_only=mode, runs=args.runs, warmup=args.warmup,
                   trust_store_certificates=trust_store.certificates(bundle), layer_ca=args.layer_ca,
                   hook_prepared=hook_prepared(args.hook_zip), labels=LABELS,
                   columns={name: base for name, (base, _) in args.columns.items()})


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
    parser.add_argument("--python", action="append", required=True, help="MINOR=base interpreter, e.g. 3.12=... "
                        "(its stand-in runtime, lab/standin/runtime_prefix.py, is what runs)")
    parser.add_argument("--memory-mb", type=int, action="append", help="Lambda memory size (repeat; default "
                        "128, 512, 1769): each child at its CPU share")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--warm-cache", action="store_true", help="do not drop the page cache")
    parser.add_argument("--column", action="append", default=[], help="NAME=BASE,VAR=VALUE,...: an extra "
                        "column, BASE's tree with these variables (a lever measured side by side)")
    parser.add_argument("--json", help="write the rows here (make coldstart: build/coldstart.json)")
    parser.add_argument("--inside", help=argparse.SUPPRESS)  # set when re-executed under unshare
    parser.add_argument("--layer-ca", action="append", default=[], help=argparse.SUPPRESS)  # from outside
    args = parser.parse_args(argv)
    args.memory_mb = args.memory_mb or list(MEMORY_MB)
    args.columns = parse_columns(args.column)
    pythons = parse_pythons(args.python)

    if args.inside:
        # In our private mount namespace: the tree and each stand-in runtime's prefix read-only, then
        # measure.
        subprocess.run(["mount", "--make-rprivate", "/"], check=True)
        for folder in [args.inside] + [os.path.dirname(os.path.dirname(python)) for _, python in pythons]:
            subprocess.run(["mount", "--bind", folder, folder], check=True)
            subprocess.run(["mount", "-o", "remount,bind,ro", folder], check=True)
        measure_and_write(args, pythons, args.inside, "read-only bind mounts (unshare -m)")
        return
    from lab.standin import runtime_prefix

    # The stand-in runtime of each CPython (awslambdaric and the runtime's boto3 in its site-packages).
    pythons = [(minor, str(runtime_prefix.ensure(minor))) for minor, _ in pythons]
    root = tempfile.mkdtemp(prefix="coldstart-")
    try:
        prepare(args.zip, pythons, root, args.hook_zip, runtime_copies=False)
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
            command += ["--column=" + column for column in args.column]
            command += ["--json", os.path.abspath(args.json)] if args.json else []
            subprocess.run(["unshare", "-m", *command], check=True)
            return
        raise SystemExit("coldstart: needs unshare -m (root) for read-only trees")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
