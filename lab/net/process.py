"""A process the lab started, stopped by its pid and never left behind.

The lab starts long-lived processes (DynamoDB Local's JVM, the durable execution runner, commands
inside a NAT namespace, AWS's Runtime Interface Emulator); the machine is shared, so each is
stopped through its own ``Popen`` (its pid), never by name. ``stop(proc)`` sends SIGTERM, gives it
``timeout`` seconds to exit, then SIGKILL (a process that ignores or hangs on SIGTERM must not
outlive its test), and reaps it either way. A process that already exited is only reaped (Popen
signals no pid it has reaped).
"""

from __future__ import annotations

import subprocess


def stop(proc: subprocess.Popen, timeout: float = 5.0) -> None:
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout)
