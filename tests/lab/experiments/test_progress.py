"""lab/experiments/progress.py: a rewritten status line on a terminal, nothing when stderr is not one."""

import os
import pty
import select
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

# Three invocations of a stand-in function through Progress.wrap, with a log line in between.
CHILD = r"""
import sys
sys.path.insert(0, sys.argv[1])
from lab.experiments.progress import Progress

class Fn:
    def invoke(self, event, timeout=90.0):
        return event

progress = Progress("demo 128 MB", total=3)
fn = progress.wrap(Fn(), lambda: ("steady", "layer on / 1 put"))
fn.invoke(1)
progress.print("a log line")
fn.invoke(2)
fn.invoke(3)
progress.close()
print("end", flush=True)
"""


def _run(stderr_is_tty):
    """Run CHILD with stdout on a pipe and stderr on a pty (or a pipe); return (stdout, stderr)."""
    if stderr_is_tty:
        master, slave = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(REPO)], stdout=subprocess.PIPE,
                                stderr=slave, close_fds=True)
        os.close(slave)
        err = b""
        try:
            while True:
                ready, _, _ = select.select([master], [], [], 10)
                if not ready:
                    break
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # EIO: the child closed its end
                    break
                if not chunk:
                    break
                err += chunk
            out, _ = proc.communicate(timeout=10)
            assert proc.returncode == 0
        finally:
            os.close(master)
            if proc.poll() is None:  # a hung child is stopped, not left behind
                proc.kill()
                proc.wait()
        return out.decode(), err.decode()
    done = subprocess.run([sys.executable, "-c", CHILD, str(REPO)], capture_output=True, text=True,
                          timeout=30, check=True)
    return done.stdout, done.stderr


def test_status_line_on_a_terminal():
    """On a pty: the line names title, phase, configuration and counts up to 3/3, rewritten with
    \\r + erase-line, cleared before a log line and at the end."""
    out, err = _run(stderr_is_tty=True)
    assert out.splitlines() == ["a log line", "end"]
    assert "demo 128 MB | steady | layer on / 1 put | 0/3 invocations" in err
    assert "| 3/3 invocations" in err
    assert err.count("\r\x1b[K") >= 6
    assert err.endswith("\r\x1b[K")  # close() leaves a clean line


def test_quiet_when_not_a_terminal():
    """Piped (a CI log, a file): not a byte on stderr, the log lines unchanged on stdout."""
    out, err = _run(stderr_is_tty=False)
    assert out.splitlines() == ["a log line", "end"]
    assert err == ""
