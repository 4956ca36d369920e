"""What the layer costs a child process: start one ProcessPoolExecutor worker and get its first result.

The parent starts the way the managed runtime starts a function (lab/standin/runtime/startup.py: the layer's
folder through ``site.addsitedir``, so its ``.pth`` runs, then ``PYTHONPATH`` set to the runtime
folder, which is what a forkserver or spawn child starts with). Then, per start method, it starts a
one-worker ``ProcessPoolExecutor`` and waits for the worker's first result (``os.getpid``), ROUNDS
times; the median is the row's number. Three configurations side by side in one run, interleaved
in batches of 3 rounds, each batch in a fresh parent: no layer (an empty /opt), the layer with the
switch off, the layer on. With the
switch on a forkserver or spawn child imports and activates the layer (children.py) before it runs
anything; a forked child inherits it and pays nothing.

    python bench/children.py [--python 3.13=/path/python3.13 ...] [--rounds 30] [--json build/bench-children.json]
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

from rows import write_rows

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNTIME_DIR = os.path.join(REPO, "lab", "standin", "runtime")
METHODS = ("fork", "forkserver", "spawn")
BATCH = 3  # rounds per parent process
CONFIGS = (("no layer", None), ("layer, switch off", {}), ("layer on", {"AWS_PYTHON_KEEPALIVE": "1"}))

# Run in the parent: the runtime's startup, then ROUNDS one-worker pools per start method.
# The startup runs under ``if __name__ == "__main__"``, as in the runtime's bootstrap.py: a spawn
# child imports this file again as its main module, and must not run the startup (nor its .pth).
PARENT = r"""
import json, os, sys, time


def activated():
    keepalive = sys.modules.get("aws_keepalive")
    return bool(getattr(keepalive, "_activated", False))


def main():
    sys.path.insert(0, %(runtime)r)
    import startup
    startup.run(%(opt)r, %(task)r, %(runtime)r)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    out = {}
    for method in %(methods)r:
        context = multiprocessing.get_context(method)
        times = []
        for _ in range(%(rounds)d):
            started = time.perf_counter()
            with ProcessPoolExecutor(1, mp_context=context) as pool:
                pool.submit(os.getpid).result()
                times.append((time.perf_counter() - started) * 1000)
        with ProcessPoolExecutor(1, mp_context=context) as pool:
            out[method] = {"ms": times, "activated": pool.submit(activated).result()}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
"""


# The work a forkserver or spawn child does for the layer, alone, in a fresh interpreter: unpickle the
# entry the parent adds to the preparation data (imports the layer, wraps spawn.prepare), then the
# wrapped prepare (activates). Prints the microseconds.
CHILD_WORK = r"""
import pickle, sys, time
import multiprocessing.spawn as spawn
sys.path.insert(0, %(layer)r)
from aws_keepalive.children import _ChildStart
data = pickle.dumps(_ChildStart(%(layer)r))
del sys.modules["aws_keepalive.children"], sys.modules["aws_keepalive"]
sys.path.remove(%(layer)r)
started = time.perf_counter()
pickle.loads(data)
spawn.prepare({})
elapsed = time.perf_counter() - started
assert sys.modules["aws_keepalive"]._activated
print(elapsed * 1e6)
"""


def child_work_us(python, rounds):
    """Median microseconds of the layer's own work in a new forkserver/spawn child (switch on)."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "AWS_PYTHON_KEEPALIVE": "1"}
    code = CHILD_WORK % {"layer": os.path.join(REPO, "layer")}
    times = [float(subprocess.run([python, "-c", code], env=env, capture_output=True, text=True,
                                  check=True, timeout=60).stdout) for _ in range(rounds)]
    return statistics.median(times)


def run_parent(python, opt, env_extra, rounds, workdir):
    task = os.path.join(workdir, "task")
    os.makedirs(task, exist_ok=True)
    script = os.path.join(workdir, "parent.py")
    with open(script, "w") as out:
        out.write(PARENT % {"runtime": RUNTIME_DIR, "opt": opt, "task": task, "methods": METHODS,
                            "rounds": rounds})
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", **env_extra}
    completed = subprocess.run([python, script], env=env, capture_output=True, text=True, timeout=600,
                               cwd=task)
    if completed.returncode != 0:
        raise RuntimeError("parent failed: %s" % completed.stderr[-2000:])
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", action="append", default=[], help="MINOR=/path/to/python (repeatable)")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--json", default=os.path.join(REPO, "build", "bench-children.json"))
    args = parser.parse_args(argv)
    pythons = [entry.split("=", 1) for entry in args.python] or [("%d.%d" % sys.version_info[:2], sys.executable)]
    rows = []
    work = []
    with tempfile.TemporaryDirectory(prefix="bench-children-") as workdir:
        empty = os.path.join(workdir, "opt-empty")
        layer = os.path.join(workdir, "opt-layer")
        os.makedirs(empty)
        os.makedirs(layer)
        os.symlink(os.path.join(REPO, "layer"), os.path.join(layer, "python"))
        for minor, python in pythons:
            # Interleaved: batches of BATCH rounds, the three configurations in turn, so that a
            # shared machine's load changes reach all three alike.
            results = {label: {m: {"ms": [], "activated": True} for m in METHODS} for label, _ in CONFIGS}
            for _ in range(max(1, args.rounds // BATCH)):
                for label, env_extra in CONFIGS:
                    opt = empty if env_extra is None else layer
                    got = run_parent(python, opt, env_extra or {}, BATCH,
                                     os.path.join(workdir, minor + label.replace(" ", "-")))
                    for method in METHODS:
                        results[label][method]["ms"] += got[method]["ms"]
                        results[label][method]["activated"] = (results[label][method]["activated"]
                                                               and got[method]["activated"])
            for method in METHODS:
                row = {"python": minor, "method": method,
                       "child activated (layer on)": results["layer on"][method]["activated"]}
                for label, _ in CONFIGS:
                    row[label] = statistics.median(results[label][method]["ms"])
                    if label != "layer on" and results[label][method]["activated"]:
                        raise RuntimeError("%s: a %s child was activated" % (label, method))
                row["on - off"] = row["layer on"] - row["layer, switch off"]
                rows.append(row)
            work.append({"python": minor, "child_work_us": child_work_us(python, args.rounds)})
    print("Child start to first result (ProcessPoolExecutor(1), median of %d; %s, %d cores, load %.2f)"
          % (args.rounds, platform.machine(), os.cpu_count(), os.getloadavg()[0]))
    print()
    print("| CPython | start method | no layer | layer, switch off | layer on | on - off | child activated |")
    print("|---|---|---:|---:|---:|---:|---|")
    for row in rows:
        print("| %s | %s | %.1f ms | %.1f ms | %.1f ms | %+.1f ms | %s |" % (
            row["python"], row["method"], row["no layer"], row["layer, switch off"], row["layer on"],
            row["on - off"], "yes" if row["child activated (layer on)"] else "NO"))
    print()
    for entry in work:
        print("CPython %s: the layer's own work in a new forkserver/spawn child (unpickle its entry, "
              "import, activate): %.0f us (median of %d fresh interpreters)"
              % (entry["python"], entry["child_work_us"], args.rounds))
    write_rows(args.json, rows, child_work=work, rounds=args.rounds, load_1=os.getloadavg()[0],
               machine="%s, %d cores" % (platform.machine(), os.cpu_count()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
