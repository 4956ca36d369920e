"""Benchmark: what the layer's startup hook costs a cold start, switch off and on.

Run: ``make bench`` (or ``python bench/startup.py [--runs N]``).  Prints numbers; asserts nothing.

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


def interpreters():
    """The test venvs of CPython 3.10-3.13 (they hold the pinned botocore), as make test made them."""
    found = []
    for minor in ("3.10", "3.11", "3.12", "3.13"):
        python = os.path.join(REPO, ".venv", "test-" + minor, "bin", "python")
        if os.path.exists(python):
            found.append((minor, python))
    return found or [("%d.%d" % sys.version_info[:2], sys.executable)]


def prepare(workdir):
    """Three copies of the layer folder: the layer's .pth, a comment-only .pth, no .pth."""
    with_pth = os.path.join(workdir, "with_pth")
    shutil.copytree(LAYER, with_pth, ignore=shutil.ignore_patterns("__pycache__"))
    comment_pth = os.path.join(workdir, "comment_pth")
    shutil.copytree(with_pth, comment_pth)
    with open(os.path.join(comment_pth, "aws_keepalive.pth"), "w") as pth:
        pth.write("# a .pth file with no import line\n")
    without_pth = os.path.join(workdir, "without_pth")
    shutil.copytree(with_pth, without_pth)
    os.remove(os.path.join(without_pth, "aws_keepalive.pth"))
    return with_pth, comment_pth, without_pth


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

    print("Hook cost in site.addsitedir(layer): median (p90) over %d fresh interpreters each" % args.runs)
    print("%-8s %14s %14s %14s %14s | %10s %10s %10s" % (
        "CPython", "no .pth", "comment .pth", "layer off", "layer on", ".pth cost", "hook off", "hook on"))
    rows = []
    with tempfile.TemporaryDirectory() as workdir:
        with_pth, comment_pth, without_pth = prepare(workdir)
        for minor, python in interpreters():
            for folder in (with_pth, comment_pth, without_pth):
                compile_for(python, folder)
            baseline = describe(sample(python, ADDSITEDIR, without_pth, off, args.runs))
            any_pth = describe(sample(python, ADDSITEDIR, comment_pth, off, args.runs))
            cost_off = describe(sample(python, ADDSITEDIR, with_pth, off, args.runs))
            cost_on = describe(sample(python, ADDSITEDIR, with_pth, on, args.runs))
            print(
                "%-8s %6.0f (%5.0f) %6.0f (%5.0f) %6.0f (%5.0f) %6.0f (%5.0f) | %7.0f us %7.0f us %7.0f us"
                % (minor, baseline[0], baseline[1], any_pth[0], any_pth[1], cost_off[0], cost_off[1],
                   cost_on[0], cost_on[1], any_pth[0] - baseline[0], cost_off[0] - any_pth[0],
                   cost_on[0] - any_pth[0])
            )
            rows.append((minor, python))

        print()
        print("Patch applied when botocore is imported (switch on): median (p90) over %d runs"
              % args.patch_runs)
        for minor, python in rows:
            patch_cost = describe(sample(python, PATCH, with_pth, on, args.patch_runs))
            print("%-8s %7.0f us (%5.0f)" % (minor, patch_cost[0], patch_cost[1]))


if __name__ == "__main__":
    main()
