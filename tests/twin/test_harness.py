"""harness.py: the twin's own plumbing, where a mistake would hang or leak rather than fail."""

import os

import pytest
from harness import Case

# Each side's interpreter forks a child and both sleep 60 s; the case times out at 8 s (room for an
# interpreter's start on a busy machine, before it writes the child's pid).
CASES = {"hang": Case("hang", {}, timeout_s=8,
                      params=lambda run: {"sleep_s": 60, "pid_file": run.dir + ".child-pid"})}


def alive(pid):
    """Whether ``pid`` runs (a zombie, dead and not yet reaped, does not)."""
    try:
        with open("/proc/%d/status" % pid) as status:
            return not any(line.split()[1:2] == ["Z"] for line in status if line.startswith("State:"))
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("case", ["hang"])
def test_a_timed_out_twin_is_stopped_with_its_children(twin, case):
    """A twin past its timeout is killed with its process group: its forked child too, and the run
    ends at the timeout (a child left alive held the pipes open: communicate() waited 60 s)."""
    for side in ("stock", "layer"):
        run = twin[side]
        pid_file = run.dir + ".child-pid"
        with open(pid_file) as written:
            child = int(written.read())
        os.remove(pid_file)
        assert run.result is None and run.wall_s < 30, run.describe()
        assert not alive(child), (side, child)
