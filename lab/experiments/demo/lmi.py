"""``make demo-lmi``: Lambda Managed Instances -- N never-frozen workers, some idle past the NAT
timeout while others work -- with no layer, the layer switched off and switched on, behind a NAT
that resets and one that drops silently.

What runs (everything on this machine, nothing reaches AWS):

* DynamoDB Local (a JVM) behind the lab's TLS front, one table.
* Per configuration and NAT mode, its own network (lab.standin.function_net): a NAT namespace whose idle
  timeout is 350 s scaled down, in reset mode (an AWS NAT gateway's RST) or drop mode (a silent
  middlebox), and a Netem hop adding the RTT.
* Per network one execution environment in multi-concurrent mode (lab.standin.lambda_env with
  ``max_concurrency``): awslambdaric's own MultiConcurrentRunner starts N worker processes
  (AWS_LAMBDA_MAX_CONCURRENCY=N, AWS_LAMBDA_INITIALIZATION_TYPE=lambda-managed-instances), each
  importing lab/experiments/demo/lmi_task/app.py (examples/put_item's put, with the read timeout scaled like the
  NAT) and keeping its own botocore pool. Never frozen: as on Managed Instances, the kernel's
  keep-alive probes leave whenever they are due.
* The Runtime API hands an invocation to the worker that came back to ``next`` last (LIFO), so
  the schedule decides who idles: a warm-up burst of N (every worker opens its connection), then
  rounds of "busy" bursts of B < N invocations once a second for longer than the NAT timeout --
  the same B workers serve them, the other N - B sit idle -- and one burst of N that reaches the
  idle workers too. A call is counted "idle" when its worker had served nothing for longer than the
  NAT timeout, else "busy".

Columns: calls; p50 / p99 of the function's own timing of its put; new connections (urllib3's log
in the worker: new and re-opened); resets (attempts without an HTTP response: a reset or a read
timeout); botocore retries; hangs (puts with an attempt that got no answer for at least the scaled
read timeout: a call that sat on a silently dropped connection); failed invocations; and, read with
``ss -tno`` inside the namespace at the end, how many workers' pooled connections carry a keep-alive
timer.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from lab import REPO
from lab.experiments.demo.shared import (LAYER_ON, NO_LAYER, SWITCH_OFF, Config, begin, call_ms as put_ms, exit_with,
                                        print_time_scale, side_by_side, warm_jvm)
from lab.services.dynamodb import DynamoDBLocal
from lab.standin.driver import percentile, sleep_until
from lab.standin.function_net import NAT_TIMEOUT_S, FunctionNetwork, create_table, keepalive_env
from lab.standin.lambda_env import extract_layer, settled_keepalive_timers

TASK = Path(__file__).resolve().parent / "lmi_task"
TABLE = "demo-lmi"
BOTOCORE_READ_TIMEOUT_S = 60
PHASES = ("busy", "idle")
HEADER = ("configuration", "NAT", "phase", "calls", "p50 ms", "p99 ms", "new conn", "resets", "retries",
          "hangs", "failed", "workers with timer")


CONFIGS = [NO_LAYER, SWITCH_OFF, LAYER_ON]


@dataclass
class Run:
    """One configuration x NAT mode: its counted calls, each worker's ss timers at the end."""

    config: Config
    mode: str
    calls: list = field(default_factory=list)  # (phase, idle_s, Invocation), warm-up left out
    timers: dict = field(default_factory=dict)  # worker pid -> ss keep-alive timers ([] = none)
    fds: dict = field(default_factory=dict)  # worker pid -> (open file descriptors, of which sockets)
    error: Optional[BaseException] = None
    fn: object = None


def worker_of(record) -> Optional[int]:
    if record.ok and isinstance(record.result, dict) and record.result.get("pid"):
        return record.result["pid"]
    return record.worker_pid


def run_one(run: Run, network: FunctionNetwork, offset: float, stop: threading.Event, opt: Optional[Path],
            timers: dict, args) -> None:
    env = keepalive_env(on=run.config.on, **timers, debug=False)
    env["LAB_READ_TIMEOUT_S"] = str(args.read_timeout)
    last_served: dict = {}

    def burst(width: int, counted: bool) -> None:
        started = time.monotonic()
        for record in fn.invoke_burst([{}] * width, timeout=60.0):
            pid = worker_of(record)
            idle_s = started - last_served.get(pid, started)
            last_served[pid] = time.monotonic()
            if counted:
                run.calls.append(("idle" if idle_s > args.nat_timeout else "busy", idle_s, record))

    try:
        with network.function(TASK, "app.handler", table=TABLE, python=args.python, variant=args.variant,
                              opt=opt if run.config.layer else None, env=env,
                              max_concurrency=args.workers) as fn:
            run.fn = fn
            time.sleep(offset)
            burst(args.workers, counted=False)
            for _ in range(args.rounds):
                if stop.is_set():
                    break
                t0 = time.monotonic()
                i = 0
                while time.monotonic() < t0 + args.idle and not stop.is_set():
                    sleep_until(t0 + i)
                    burst(args.busy, counted=True)
                    i += 1
                sleep_until(t0 + args.idle)
                burst(args.workers, counted=True)
            port = network.netem.port
            workers = [pid for pid in last_served if pid is not None]
            run.timers = settled_keepalive_timers(workers, port, network.nat.command([]))
            run.fds = {pid: open_fds(pid) for pid in workers}
    except BaseException as error:  # reported by the main thread
        run.error = error


def open_fds(pid: int) -> tuple:
    """(open file descriptors, of which sockets) of a process, from /proc/PID/fd."""
    links = []
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            links.append(os.readlink("/proc/%d/fd/%s" % (pid, fd)))
        except OSError:  # closed meanwhile
            pass
    return len(links), sum(1 for link in links if link.startswith("socket:"))


def fd_summary(runs) -> list:
    """Per configuration x NAT mode: the fewest and most file descriptors (and sockets) a worker held."""
    out = []
    for run in runs:
        if run.fds:
            totals = [total for total, _ in run.fds.values()]
            sockets = [count for _, count in run.fds.values()]
            out.append({"configuration": run.config.label, "nat_mode": run.mode, "workers": len(run.fds),
                        "fds_min": min(totals), "fds_max": max(totals),
                        "sockets_min": min(sockets), "sockets_max": max(sockets)})
    return out


def waited_out_read_timeout(record, read_timeout_s: float) -> bool:
    """True when one of the call's attempts got no HTTP response and ended no sooner than
    ``read_timeout_s`` after botocore sent it: the call sat on a silently dropped flow.

    Timed between the worker's own lab_observe events (the attempt, then the exception or retry
    that ended it), not by the put's total time: that also holds botocore's backoff and the
    retry's new TCP + TLS handshake through the lab's relays (Netem, the TLS front, DynamoDB
    Local's JVM), which took 0.3-0.6 s with six environments side by side on a loaded 2-core
    machine, so a reset call reached the scaled 1 s read timeout and passed for a hang.
    """
    sent_at = None
    for event in record.events:
        if event["kind"] == "attempt":
            sent_at = event["t"]
        elif event["kind"] == "http_response":
            sent_at = None
        elif event["kind"] in ("exception", "retry") and sent_at is not None:
            if event["t"] - sent_at >= read_timeout_s:
                return True
            sent_at = None
    return False


def rows(runs, args) -> list:
    """One dict per configuration x NAT mode x phase (the table's rows and the JSON's)."""
    out = []
    for run in runs:
        with_timer = sum(1 for found in run.timers.values() if found and None not in found)
        for phase in PHASES:
            records = [record for p, _, record in run.calls if p == phase]
            ms = [v for v in (put_ms(r) for r in records) if v is not None]
            out.append({
                "configuration": run.config.label, "nat_mode": run.mode, "phase": phase,
                "calls": len(records),
                "p50_ms": percentile(ms, 50), "p99_ms": percentile(ms, 99),
                "new_connections": sum(r.counters["new_connections"] + r.counters["dropped_replaced"]
                                       for r in records),
                "resets": sum(r.counters["connection_errors"] for r in records),
                "retries": sum(r.counters["retries"] for r in records),
                "hangs": sum(1 for r in records if waited_out_read_timeout(r, args.read_timeout)),
                "failed": sum(1 for r in records if not r.ok),
                "workers": args.workers, "workers_with_timer": with_timer,
            })
    return out


def markdown(table_rows) -> str:
    from lab.experiments.demo.report import markdown as table

    def cell(value):
        return "-" if value is None else ("%.1f" % value if isinstance(value, float) else str(value))

    return table([(r["configuration"], "reset" if r["nat_mode"] == "reset" else "silent", r["phase"],
                   r["calls"], cell(r["p50_ms"]), cell(r["p99_ms"]), r["new_connections"], r["resets"],
                   r["retries"], r["hangs"], r["failed"], "%d / %d" % (r["workers_with_timer"], r["workers"]))
                  for r in table_rows], header=HEADER, first_number=3)


def view(data) -> str:
    """docs/shapes-lmi.md's table, rendered from build/demo-lmi.json by tools/docs/render_docs.py (make docs)."""
    lmi = data["demo-lmi"]
    fds = lmi["worker_fds"]

    def span(low, high):
        return "%d" % low if low == high else "%d–%d" % (low, high)

    return ("%s, %d workers, %d rounds, NAT timeout %d s, read timeout %s s:\n\n%s\n\nEach worker held "
            "%s file descriptors, %s of them sockets." % (
                lmi["interpreter"], lmi["workers"], lmi["rounds"], lmi["nat_timeout_s"], lmi["read_timeout_s"],
                markdown(lmi["rows"]), span(min(e["fds_min"] for e in fds), max(e["fds_max"] for e in fds)),
                span(min(e["sockets_min"] for e in fds), max(e["sockets_max"] for e in fds))))


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--zip", default=str(REPO / "build" / "layer.zip"), help="the built layer")
    p.add_argument("--png", default=str(REPO / "build" / "demo-lmi.png"))
    p.add_argument("--json", default=str(REPO / "build" / "demo-lmi.json"))
    p.add_argument("--python", default="3.13", help="CPython minor of the stand-in (Managed Instances: 3.13+)")
    p.add_argument("--variant", default="", help='runtime site-packages: "" (awslambdaric 4.2.x) or "ric40"')
    p.add_argument("--workers", type=int, default=4, help="AWS_LAMBDA_MAX_CONCURRENCY")
    p.add_argument("--busy", type=int, default=2, help="invocations per busy burst (< workers)")
    p.add_argument("--rounds", type=int, default=4, help="busy stretches, each ended by a full burst")
    p.add_argument("--rtt-ms", type=float, default=4.0, help="emulated round-trip time")
    p.add_argument("--nat-timeout", type=int, default=6, help="NAT idle timeout, s (AWS: 350)")
    p.add_argument("--modes", default="reset,drop", help="NAT modes: reset (RST) and/or drop (silent)")
    p.add_argument("--jvm-warmup", type=int, default=300, help="puts to warm DynamoDB Local first")
    args = p.parse_args(argv)
    if not 0 < args.busy < args.workers:
        p.error("--busy must be between 1 and --workers - 1")
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    args.idle = args.nat_timeout + 2.0  # how long the idle workers sit idle per round
    scale = args.nat_timeout / NAT_TIMEOUT_S
    args.read_timeout = max(1, round(BOTOCORE_READ_TIMEOUT_S * scale))
    return args


def run_all(args, ddb, timers) -> list:
    """Every configuration x NAT mode side by side, in threads, start times staggered; ``timers``:
    the layer's scaled timer variables."""
    runs = [Run(c, m) for m in args.modes for c in CONFIGS]
    networks: list = []
    try:
        opt = extract_layer(args.zip, REPO / "build" / "demo-lmi" / "opt")
        for run in runs:
            networks.append(FunctionNetwork(ddb, nat_timeout=args.nat_timeout, mode=run.mode,
                                            rtt=args.rtt_ms / 1000.0).start())
        side_by_side(runs, networks, run_one, lambda run: "lmi-%s-%s" % (run.config.name, run.mode),
                     (opt, timers, args))
    finally:
        for network in networks:
            network.stop()  # when a network failed to start: side_by_side has not run
    return runs


def main(argv=None) -> int:
    from bench.rows import write_rows
    from lab.experiments.demo.plot import plot_lmi

    args = parse_args(argv)
    if not begin("demo-lmi", args.python, args.variant):
        return 1
    print("Lab: Lambda Managed Instances stand-in, CPython %s, awslambdaric %s, %d workers "
          "(AWS_LAMBDA_MAX_CONCURRENCY), never frozen; DynamoDB Local over TLS, RTT %.1f ms"
          % (args.python, "4.0.x" if args.variant == "ric40" else "4.2.x", args.workers, args.rtt_ms))
    timers = print_time_scale(args.nat_timeout, lambda scale: "idle workers sit %.0f s (stand for %.0f s); "
                              "botocore read_timeout 60 s -> %d s" % (args.idle, args.idle / scale, args.read_timeout))
    print("Schedule: warm-up burst of %d, then %d rounds of %d-wide bursts at 1/s for %.0f s + one burst of %d"
          % (args.workers, args.rounds, args.busy, args.idle, args.workers))
    started = time.monotonic()
    with DynamoDBLocal() as ddb:
        create_table(ddb, TABLE)
        warm_jvm(ddb, args.jvm_warmup, TABLE)
        print("Running %d environments side by side (%s x NAT %s) ..."
              % (len(CONFIGS) * len(args.modes), "/".join(c.name for c in CONFIGS), "/".join(args.modes)),
              flush=True)
        runs = run_all(args, ddb, timers)
    failed = [r for r in runs if r.error is not None]
    for r in failed:
        print("%s / %s failed: %r" % (r.config.name, r.mode, r.error), file=sys.stderr)
    table_rows = rows(runs, args)
    print()
    print(markdown(table_rows))
    fds = fd_summary(runs)
    print()
    for entry in fds:
        print("%s, NAT %s: each worker holds %d-%d file descriptors, %d-%d of them sockets"
              % (entry["configuration"], entry["nat_mode"], entry["fds_min"], entry["fds_max"],
                 entry["sockets_min"], entry["sockets_max"]))
    load = os.getloadavg()
    timers = {"%s/%s" % (r.config.name, r.mode): r.timers for r in runs}
    write_rows(args.json, table_rows, worker_fds=fds, worker_timers=timers,
               machine="%s, %d cores" % (platform.machine(), os.cpu_count()),
               interpreter="CPython %s stand-in" % args.python, load_1_5_15=load, nat_timeout_s=args.nat_timeout,
               read_timeout_s=args.read_timeout, workers=args.workers, rounds=args.rounds, busy=args.busy)
    plot_lmi(runs, args, Path(args.png), put_ms)
    print("Plot: %s" % args.png)
    print("Total %.0f s; load average %.2f %.2f %.2f" % ((time.monotonic() - started,) + load))
    return 1 if failed else 0


if __name__ == "__main__":
    exit_with(main)
