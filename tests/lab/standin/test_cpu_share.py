"""lab/standin/cpu_share.py: a process runs inside its own cgroup CPU quota, removed afterwards."""

import os
import subprocess
import sys

import pytest

from lab.standin import cpu_share

READ_OWN_QUOTA = r"""
import os
line = [l for l in open("/proc/self/cgroup") if ":cpu," in l or ":cpu:" in l or ",cpu," in l][0]
folder = "/sys/fs/cgroup/cpu" + line.strip().split(":", 2)[2]
print(os.path.basename(folder), open(folder + "/cpu.cfs_quota_us").read().strip(),
      open(folder + "/cpu.cfs_period_us").read().strip())
"""


def _ours():
    return [name for name in os.listdir(cpu_share.CPU_ROOT)
            if name.startswith("aws-keepalive-%d-" % os.getpid())]


@pytest.mark.parametrize("memory_mb,quota_us", [(128, 7235), (512, 28942), (1769, 100000),
                                                (10240, 100000)])
def test_child_runs_under_the_memory_sizes_quota(memory_mb, quota_us):
    """The child itself sits in a fresh cgroup whose quota is MB/1769 of a 100 ms period."""
    done = cpu_share.run([sys.executable, "-c", READ_OWN_QUOTA], memory_mb,
                         capture_output=True, text=True, check=True)
    name, quota, period = done.stdout.split()
    assert name.startswith("aws-keepalive-%d-" % os.getpid()) and name.endswith("-%d" % memory_mb)
    assert (int(quota), int(period)) == (quota_us, 100000)
    assert _ours() == []


def test_cgroup_removed_when_the_command_fails():
    """A command that cannot start still leaves no cgroup behind."""
    with pytest.raises((OSError, subprocess.SubprocessError)):
        cpu_share.run(["/nonexistent/command"], 128)
    assert _ours() == []


def test_prefixed_command_joins_the_quota_and_it_is_removed_after():
    """A command behind Quota.prefix() runs in the quota (same pid as the shell: exec), and the
    cgroup is gone after the block."""
    with cpu_share.Quota(512) as quota:
        done = subprocess.run(quota.prefix() + [sys.executable, "-c", READ_OWN_QUOTA],
                              capture_output=True, text=True, check=True)
        assert done.stdout.split()[0] == os.path.basename(quota.folder)
        assert done.stdout.split()[1:] == ["28942", "100000"]
    assert _ours() == []


def test_two_quotas_of_one_memory_size_at_once():
    """Several functions of one memory size (make demo's) each get their own cgroup."""
    with cpu_share.Quota(128) as first, cpu_share.Quota(128) as second:
        assert first.folder != second.folder
        assert len(_ours()) == 2
    assert _ours() == []


def test_describe_names_the_share_or_no_quota():
    """The header line of make demo / make soak: the share of a memory size, or no quota for 0."""
    assert cpu_share.describe(128) == ("Memory size 128 MB: each function at 7.2 % of one vCPU "
                                       "(cgroup CPU quota; 1769 MB = 1 vCPU)")
    assert "no CPU quota" in cpu_share.describe(0)
