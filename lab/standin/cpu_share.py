"""Run a process at a Lambda memory size's CPU share: a cgroup v1 CPU quota, made and removed per run.

Lambda gives a function CPU in proportion to its memory: 1769 MB is one vCPU (FACTS.md), so a
128 MB function gets 128/1769 of one core. A cgroup under /sys/fs/cgroup/cpu/ with
cpu.cfs_quota_us = share * cpu.cfs_period_us (100 ms) reproduces that throttling on this machine.

Two ways in: ``run()`` for a command run to its end (bench/connect.py), and ``Quota`` for a process
that lives longer (the lab's stand-in function, lab/standin/lambda_env.py), whose command is prefixed so
that it joins the cgroup itself before exec'ing the real command: no preexec_fn, which is not safe
in a process with threads (make demo starts its functions from threads).
"""

import itertools
import os
import subprocess
import time

CPU_ROOT = "/sys/fs/cgroup/cpu"
FULL_VCPU_MB = 1769
PERIOD_US = 100000
_serial = itertools.count(1)  # several quotas of one process (and one memory size) at once


def share(memory_mb):
    """The fraction of one vCPU Lambda gives ``memory_mb`` (capped at one core here)."""
    return min(1.0, memory_mb / FULL_VCPU_MB)


def describe(memory_mb):
    """The header line of a lab run at ``memory_mb`` (0 or None: no quota)."""
    if not memory_mb:
        return "Memory size: no CPU quota (MEMORY_MB=0: the machine's full CPU)"
    return ("Memory size %d MB: each function at %.1f %% of one vCPU (cgroup CPU quota; 1769 MB = 1 vCPU)"
            % (memory_mb, 100 * share(memory_mb)))


def quota_us(memory_mb):
    """cpu.cfs_quota_us for ``memory_mb`` (the kernel's minimum is 1 ms)."""
    return max(1000, int(PERIOD_US * share(memory_mb)))


class Quota:
    """A fresh cgroup throttled to ``memory_mb``'s CPU share, removed on exit (also on error).

        with Quota(128) as quota:
            subprocess.Popen(quota.prefix() + command)   # the child joins, then execs command
    """

    def __init__(self, memory_mb):
        self.memory_mb = memory_mb
        self.folder = os.path.join(CPU_ROOT, "aws-keepalive-%d-%d-%d" % (os.getpid(), next(_serial),
                                                                         memory_mb))

    def __enter__(self):
        os.mkdir(self.folder)
        try:
            _write(self.folder, "cpu.cfs_period_us", PERIOD_US)
            _write(self.folder, "cpu.cfs_quota_us", quota_us(self.memory_mb))
        except BaseException:
            os.rmdir(self.folder)
            raise
        return self

    def __exit__(self, *exc):
        self.remove()

    def join(self):
        """Move the calling process into the cgroup (a preexec_fn)."""
        _write(self.folder, "cgroup.procs", os.getpid())

    def prefix(self):
        """A command prefix: the shell joins the cgroup, then execs the rest (same pid)."""
        return ["sh", "-c", 'echo $$ > "$0" && exec "$@"', os.path.join(self.folder, "cgroup.procs")]

    def remove(self, timeout_s=5.0):
        """Remove the cgroup once its processes are gone (the kernel refuses while one is in it;
        a process just reaped can take a moment to leave)."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                os.rmdir(self.folder)
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)


def run(command, memory_mb, **kwargs):
    """subprocess.run(command) inside a fresh cgroup throttled to ``memory_mb``'s CPU share (0 or
    None: no quota, a plain subprocess.run, as ``describe`` says).

    The child joins the cgroup itself between fork and exec, so none of its work runs unthrottled;
    the cgroup is removed afterwards, also on error.
    """
    if not memory_mb:
        return subprocess.run(command, **kwargs)
    with Quota(memory_mb) as quota:
        return subprocess.run(command, preexec_fn=quota.join, **kwargs)


def _write(folder, name, value):
    with open(os.path.join(folder, name), "w") as out:
        out.write("%d\n" % value)
