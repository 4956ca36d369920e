"""Run a process at a Lambda memory size's CPU share: a cgroup v1 CPU quota, made and removed per run.

Lambda gives a function CPU in proportion to its memory: 1769 MB is one vCPU (FACTS.md), so a
128 MB function gets 128/1769 of one core. A cgroup under /sys/fs/cgroup/cpu/ with
cpu.cfs_quota_us = share * cpu.cfs_period_us (100 ms) reproduces that throttling on this machine.
"""

import os
import subprocess

CPU_ROOT = "/sys/fs/cgroup/cpu"
FULL_VCPU_MB = 1769
PERIOD_US = 100000


def share(memory_mb):
    """The fraction of one vCPU Lambda gives ``memory_mb`` (capped at one core here)."""
    return min(1.0, memory_mb / FULL_VCPU_MB)


def run(command, memory_mb, **kwargs):
    """subprocess.run(command) inside a fresh cgroup throttled to ``memory_mb``'s CPU share.

    The child joins the cgroup itself between fork and exec, so none of its work runs unthrottled;
    the cgroup is removed afterwards, also on error.
    """
    folder = os.path.join(CPU_ROOT, "aws-keepalive-%d-%d" % (os.getpid(), memory_mb))
    os.mkdir(folder)
    try:
        _write(folder, "cpu.cfs_period_us", PERIOD_US)
        _write(folder, "cpu.cfs_quota_us", max(1000, int(PERIOD_US * share(memory_mb))))

        def join():
            _write(folder, "cgroup.procs", os.getpid())

        return subprocess.run(command, preexec_fn=join, **kwargs)
    finally:
        os.rmdir(folder)


def _write(folder, name, value):
    with open(os.path.join(folder, name), "w") as out:
        out.write("%d\n" % value)
