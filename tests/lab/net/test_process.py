import signal
import subprocess
import sys
import time

from lab.net import process

# A child that says it is ready, then waits (for SIGTERM, or for ever when it ignores SIGTERM).
CHILD = """
import signal, sys, time
if sys.argv[1] == "ignore":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", flush=True)
time.sleep(60)
"""


def _started(mode):
    proc = subprocess.Popen([sys.executable, "-c", CHILD, mode], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "ready\n"
    return proc


def test_stop_terminates_a_running_process():
    """A process that exits on SIGTERM is stopped by it (not killed) and reaped."""
    proc = _started("plain")
    try:
        process.stop(proc)
        assert proc.returncode == -signal.SIGTERM
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


def test_stop_kills_a_process_that_ignores_sigterm():
    """A process that ignores SIGTERM is killed once ``timeout`` has passed, and reaped."""
    proc = _started("ignore")
    try:
        started = time.monotonic()
        process.stop(proc, timeout=0.5)
        assert proc.returncode == -signal.SIGKILL
        assert 0.5 <= time.monotonic() - started < 10
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


def test_stop_leaves_an_exited_process_alone():
    """A process that already exited is only reaped: its exit status stays its own."""
    proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    proc.wait(30)
    process.stop(proc)
    assert proc.returncode == 3
