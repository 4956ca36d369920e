"""bench/coldstart.py and bench/coldstart_parts.py: the pieces whose mistakes would silently change
their numbers (what strace counted, what -X importtime attributed, which column is on which
sys.path). No timing is asserted: speed is the benchmarks' output, not a test's condition."""

import os
import shutil
import subprocess
import sys

import pytest

from standin import REPO

sys.path.insert(0, os.path.join(REPO, "bench"))
import coldstart  # noqa: E402
import coldstart_parts  # noqa: E402


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_syscall_counts_reads_calls_and_errors_from_a_real_strace_summary(tmp_path):
    """Five failed opens of a missing file and one successful one are counted as openat calls with
    their errors (the summary's errors column is optional: a misread would swap or drop it)."""
    summary = tmp_path / "summary"
    code = ("import os\nfor _ in range(5):\n    try:\n        open('/nonexistent-coldstart')\n"
            "    except OSError:\n        pass\nopen(%r).close()" % os.devnull)
    subprocess.run(["strace", "-f", "-qq", "-c", "-o", str(summary), "-e", "trace=openat",
                    sys.executable, "-S", "-c", code], check=True)
    counts = coldstart_parts.syscall_counts(str(summary))
    calls, errors = counts["openat"]
    assert errors >= 5
    assert calls >= errors + 1


def test_importtime_attributes_self_time_to_each_module_and_package():
    """-X importtime's self column goes to the module named on the line; packages sum their modules."""
    stderr = ("import time: self [us] | cumulative | imported package\n"
              "import time:       120 |        120 |   botocore.compat\n"
              "import time:        30 |        150 | botocore\n"
              "import time:      2000 |       2000 | urllib3\n"
              "a line that is not importtime's\n")
    modules = coldstart_parts.importtime(stderr)
    assert modules == {"botocore.compat": 120, "botocore": 30, "urllib3": 2000}
    assert coldstart_parts.by_package(modules) == {"botocore": 0.15, "urllib3": 2.0}


def test_each_column_imports_boto3_from_its_own_tree(tmp_path):
    """The runtime copy has only itself on sys.path; the hook flavor sits in front of the runtime copy
    and runs its .pth; the full layer brings its own boto3; every layer column is switched on."""
    root = str(tmp_path)
    path, layer, boto3_root, env = coldstart.child_setup(root, "3.12", "runtime_copy")
    assert path == [os.path.join(root, "runtime-3.12")] and layer is None and env == {}
    path, layer, boto3_root, env = coldstart.child_setup(root, "3.12", "hook_layer")
    assert path == [os.path.join(root, "hook", "python"), os.path.join(root, "runtime-3.12")]
    assert layer == path[0] and boto3_root == path[1] and env == {"AWS_PYTHON_KEEPALIVE": "1"}
    path, layer, boto3_root, env = coldstart.child_setup(root, "3.12", "layer")
    assert path == [os.path.join(root, "layer", "python")] == [layer] == [boto3_root]
    assert env == {"AWS_PYTHON_KEEPALIVE": "1"}


def test_ratios_are_over_the_runtime_copy_of_the_same_memory_size():
    """Each row's *_over_runtime divides by the runtime copy measured at its own memory size."""
    def row(mb, variant, total):
        return {"python": "3.12", "memory_mb": mb, "variant": variant, **{
            key + "_ms": total for key in ("total", "total_min", "process", "cpu", "import", "client", "call")}}

    rows = [row(128, "runtime_copy", 1000.0), row(128, "layer", 800.0), row(1769, "runtime_copy", 100.0),
            row(1769, "layer", 90.0)]
    coldstart.add_ratios(rows)
    assert [r["total_over_runtime"] for r in rows] == [1.0, 0.8, 1.0, 0.9]


def test_a_difference_within_the_equal_columns_noise_is_no_difference():
    """The equal columns' distance from 1 (or half their per-round ratios' spread) is the noise: a
    column within it is no difference, one beyond it is; the table then says "no difference"."""
    def row(variant, total, cpu, iqr=(1.0, 1.0)):
        return {"python": "3.12", "memory_mb": 128, "variant": variant, "total_ms": total, "cpu_ms": cpu,
                "total_ratio_iqr": list(iqr), "cpu_ratio_iqr": list(iqr)}

    rows = [row("runtime_copy", 1000.0, 500.0), row("runtime_copy_again", 1050.0, 490.0, (0.9, 1.1)),
            row("hook_layer", 970.0, 400.0), row("layer", 800.0, 480.0)]
    coldstart.add_ratios(rows)
    again, hook, layer = rows[1], rows[2], rows[3]
    assert again["noise"] == 0.1 and again["noise_cpu"] == 0.1  # half the equal columns' spread
    assert hook["total_difference"] is False and hook["cpu_difference"] is True
    assert layer["total_difference"] is True and layer["cpu_difference"] is False
    assert coldstart.ratio_text(hook, "total") == "no difference"
    assert coldstart.ratio_text(layer, "total") == "0.80 (1.00-1.00)"
