"""What make demo (run.py) and make demo-lmi (lmi.py) both do around their measurements: the start
(namespaces available, Ctrl-C handled, the stand-in runtime made), the scaled-time header, warming
DynamoDB Local's JVM, and running every configuration side by side in threads, stopping all of it
on any exit."""

from __future__ import annotations

import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from lab.net import nat
from lab.standin.function_net import DEFAULTS, NAT_TIMEOUT_S, lab_client, scaled_timers
from lab.standin.lambda_env import runtime_python


@dataclass
class Config:
    """One configuration a demo runs side by side with the others."""

    name: str
    label: str
    layer: bool
    on: bool
    no_packets: bool = False  # gap phase with nothing leaving the namespace (nat.freeze)
    steady: bool = True
    env: dict = field(default_factory=dict)  # more of the function's variables


NO_LAYER = Config("none", "no layer", layer=False, on=False)
SWITCH_OFF = Config("off", "layer, switch off", layer=True, on=False)
LAYER_ON = Config("on", "layer on", layer=True, on=True)


def call_ms(record) -> Optional[float]:
    """The latency the function itself measured: one put (``put_ms``), or ten (``total_ms``)."""
    if not record.ok or not isinstance(record.result, dict):
        return None
    value = record.result.get("total_ms", record.result.get("put_ms"))
    return float(value) if isinstance(value, (int, float)) else None


def interrupt_on_signals() -> None:
    """Ctrl-C and SIGTERM both end the demo through KeyboardInterrupt, so the ``finally`` and ``with``
    blocks stop every function, namespace and JVM. SIGINT's default handler is set explicitly: a
    process started in the background by a non-interactive shell inherits SIGINT *ignored*."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, interrupt)


def exit_with(main: Callable[[], int]) -> None:
    """Exit with ``main()``'s status, 130 after Ctrl-C or SIGTERM (by then everything is stopped)."""
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)


def begin(target: str, python: str, variant: str = "") -> bool:
    """Ready to run ``make <target>``: Ctrl-C handled, network namespaces available (else a message
    on stderr and False), the stand-in runtime for ``python`` (and ``variant``) made."""
    interrupt_on_signals()
    reason = nat.unavailable_reason()
    if reason:
        print("make %s needs network namespaces: %s" % (target, reason), file=sys.stderr)
        return False
    runtime_python(python, variant)
    return True


def print_time_scale(nat_timeout: int, waits: Callable[[float], str]) -> dict:
    """Print how the run scales AWS's 350 s NAT timeout, what waits past it (``waits(scale)``: the
    rest of the line), and the layer's timers scaled the same way; return those timers."""
    timers = scaled_timers(nat_timeout)
    scale = nat_timeout / NAT_TIMEOUT_S
    print("Time scale: NAT idle timeout 350 s -> %d s (x%.4f); %s" % (nat_timeout, scale, waits(scale)))
    print("Layer timers scaled the same way (whole seconds, kernel minimum 1): "
          + ", ".join("AWS_PYTHON_KEEPALIVE_%s=%d (default %d)" % (k.upper(), v, DEFAULTS[k])
                      for k, v in timers.items()))
    return timers


def warm_jvm(ddb, n: int, table: str) -> None:
    """Puts from this process before anything is measured. DynamoDB Local runs in a JVM whose JIT
    needs a few hundred requests to settle (measured here: median put 7.6 ms over the first 300,
    3.3 ms after 900, through the TLS front); without this the first configurations' steady phase
    would partly measure the JIT instead of the connection."""
    if n <= 0:
        return
    started = time.monotonic()
    client = lab_client(ddb)
    for i in range(n):
        client.put_item(TableName=table, Item={"pk": {"S": "warm-%d" % i}})
    print("Warmed DynamoDB Local's JVM with %d puts (%.1f s)" % (n, time.monotonic() - started), flush=True)


def side_by_side(runs: list, networks: list, run_one: Callable, name: Callable, extra: tuple = ()) -> None:
    """``run_one(run, network, offset, stop, *extra)`` for every run at the same time, each in a
    thread, start offsets staggered across one second so that their invocations do not overlap on a
    2-core machine; returns when all are done. On any exit, Ctrl-C included, ``stop`` is set and
    every run's function (``run.fn``) and every network is stopped (both idempotent: a finished run
    has stopped its function already)."""
    stop = threading.Event()
    threads = []
    try:
        for i, (run, network) in enumerate(zip(runs, networks)):
            thread = threading.Thread(target=run_one, name=name(run), daemon=True,
                                      args=(run, network, i / len(runs), stop) + tuple(extra))
            thread.start()
            threads.append(thread)
        for thread in threads:
            while thread.is_alive():
                thread.join(0.5)
    except KeyboardInterrupt:
        print("\ninterrupted: stopping everything", file=sys.stderr)
        raise
    finally:
        stop.set()
        for run in runs:
            if run.fn is not None:
                run.fn.stop()
        for network in networks:
            network.stop()  # stops the namespace's processes; functions stop at their `with` exit
