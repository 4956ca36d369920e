"""Benchmark: what the layer's startup hook costs a cold start, switch off and on.

Run: ``make bench`` (or ``python bench/startup.py [--runs N] [--python VENV_PY ...] [--json F]``).
Prints numbers; asserts nothing.

What is measured, in a fresh interpreter per sample, exactly where Lambda pays it: the call
``site.addsitedir(<layer folder>)`` that the managed runtime makes for /opt/python.  Three copies
of ``layer/`` are timed: without any ``.pth`` (baseline), with a ``.pth`` holding only a comment
(what reading *any* ``.pth`` costs ``site``: open, read, decode -- on 3.13 the first ``.pth`` of a
process also imports ``encodings.utf_8_sig``), and with the layer's ``.pth``.  The hook's cost is
the layer's ``.pth`` minus the comment-only one; the ``.pth`` overhead is printed beside it.  The
copies carry bytecode compiled as the shipped zip has it (unchecked-hash), and the children run
with PYTHONDONTWRITEBYTECODE=1, as on Lambda's read-only /opt.

Targets (issue #2): under 0.1 ms off, under 1 ms on -- botocore's own import excluded.  The second
table is the other half of the "on" cost: the patch itself, which runs once when the function
imports botocore (timed inside the process around ``patch.apply``).
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from rows import interpreter_version, write_rows  # bench/rows.py, next to this script

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYER = os.path.join(REPO, "layer")

ADDSITEDIR = (
    "import site, sys, time\n"
    "t0 = time.perf_counter_ns(); site.addsitedir(sys.argv[1]); t1 = time.perf_counter_ns()\n"
    "print(t1 - t0)\n"
)
# The patch itself, timed from inside: it runs once, when the function imports botocore.
PATCH = (
    "import site, sys, time\n"
    "site.addsitedir(sys.argv[1])\n"
    "import aws_keepalive.patch as patch\n"
    "apply = patch.apply\n"
    "def timed(settings):\n"
    "    t0 = time.perf_counter_ns(); apply(settings); print(time.perf_counter_ns() - t0)\n"
    "patch.apply = timed\n"
    "import botocore.session\n"
)


def interpreters(pythons):
    """(minor, interpreter) for each --python; by default the test venvs make test made."""
    if not pythons:
        pythons = [os.path.join(REPO, ".venv", "test-" + minor, "bin", "python")
                   for minor in ("3.10", "3.11", "3.12", "3.13", "3.14")]
        pythons = [p for p in pythons if os.path.exists(p)] or [sys.executable]
    found = []
    for python in pythons:
        minor = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                               capture_output=True, text=True, check=True).stdout.strip()
        found.append((minor, python))
    return found


def prepare(workdir):
    """Four copies of the layer folder: the layer's .pth, `import os`, a comment-only .pth, no .pth."""
    with_pth = os.path.join(workdir, "with_pth")
    shutil.copytree(LAYER, with_pth, ignore=shutil.ignore_patterns("__pycache__"))
    copies = {"layer": with_pth}
    for name, line in (("floor", "import os\n"), ("comment", "# a .pth file with no import line\n")):
        folder = os.path.join(workdir, name + "_pth")
        shutil.copytree(with_pth, folder)
        with open(os.path.join(folder, "aws_keepalive.pth"), "w") as pth:
            pth.write(line)
        copies[name] = folder
    without_pth = os.path.join(workdir, "without_pth")
    shutil.copytree(with_pth, without_pth)
    os.remove(os.path.join(without_pth, "aws_keepalive.pth"))
    copies["none"] = without_pth
    return copies


def compile_for(python, folder):
    subprocess.run(
        [python, "-m", "compileall", "-q", "--invalidation-mode", "unchecked-hash", folder],
        check=True,
    )


def sample(python, script, folder, env, runs):
    values = []
    for _ in range(runs):
        out = subprocess.run(
            [python, "-c", script, folder], env=env, capture_output=True, text=True, timeout=60
        )
        if out.returncode != 0:
            raise SystemExit("benchmark child failed: %s" % out.stderr)
        values.append(int(out.stdout.strip()) / 1000.0)  # microseconds
    return values


def describe(values):
    values = sorted(values)
    return statistics.median(values), values[int(len(values) * 0.9) - 1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40, help="fresh interpreters per measurement")
    parser.add_argument("--patch-runs", type=int, default=15)
    parser.add_argument("--python", action="append", default=[], help="interpreter (a venv with botocore)")
    parser.add_argument("--json", help="also write the rows here (e.g. build/startup.json)")
    args = parser.parse_args()

    base_env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    }
    off = dict(base_env)
    on = dict(base_env, AWS_PYTHON_KEEPALIVE="1")

    print("Hook cost in site.addsitedir(layer): median (p90) over %d fresh interpreters each, us" % args.runs)
    print("%-7s %12s %12s %12s %12s %12s | %9s %9s %9s %9s" % (
        "CPython", "no .pth", "comment .pth", "import os", "layer off", "layer on",
        ".pth cost", "floor", "hook off", "hook on"))
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        copies = prepare(workdir)
        for minor, python in interpreters(args.python):
            for folder in copies.values():
                compile_for(python, folder)
            # Interleaved rounds, so that drift on a shared machine affects every column alike.
            names = ("none", "comment", "floor", "off", "on")
            samples = {name: [] for name in names}
            for _ in range(args.runs):
                for name in names:
                    folder = copies["layer" if name in ("off", "on") else name]
                    samples[name] += sample(python, ADDSITEDIR, folder, on if name == "on" else off, 1)
            stats = {name: describe(values) for name, values in samples.items()}
            row = {
                "python": minor,
                "python_version": interpreter_version(python),
                "pth_cost_us": round(stats["comment"][0] - stats["none"][0], 1),
                "floor_us": round(stats["floor"][0] - stats["comment"][0], 1),
                "hook_off_us": round(stats["off"][0] - stats["comment"][0], 1),
                "hook_on_us": round(stats["on"][0] - stats["comment"][0], 1),
            }
            print("%-7s %s | %9.0f %9.0f %9.0f %9.0f" % (
                minor, " ".join("%5.0f (%4.0f)" % stats[name] for name in names),
                row["pth_cost_us"], row["floor_us"], row["hook_off_us"], row["hook_on_us"]))
            rows.append((row, python))

        print()
        print("Patch applied when botocore is imported (switch on): median (p90) over %d runs"
              % args.patch_runs)
        for row, python in rows:
            patch_cost = describe(sample(python, PATCH, copies["layer"], on, args.patch_runs))
            row["patch_us"] = round(patch_cost[0], 1)
            print("%-8s %7.0f us (%5.0f)" % (row["python"], patch_cost[0], patch_cost[1]))
    if args.json:
        write_rows(args.json, [row for row, _ in rows])

if __name__ == "__main__":
    main()
