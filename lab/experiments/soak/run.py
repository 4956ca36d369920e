"""``make soak``: one function under random faults for minutes, without the layer, with it, and with
it when no packet leaves the frozen environment; every put checked, leaks looked for.

What runs (everything on this machine):

* DynamoDB Local with its database on /dev/shm (``-dbPath``: a restart keeps the items, so the
  final audit can find lost or doubled ones) behind the lab's TLS front, whose CA and port survive
  its own restarts.
* Per configuration its own network (lab.standin.function_net): a NAT namespace whose idle timeout T is
  the scaled-down 350 s, and a Netem hop that also plays the endpoint closing idle connections
  itself (a FIN after ``ENDPOINT_IDLE_T`` x T, as DynamoDB Local does after 30 s and S3 is said
  to after ~20 s).
* Configurations: no layer (the runtime-kind boto3, RUNTIME_BOTO3), no layer with AWS's own
  ``BOTOCORE_TCP_KEEPALIVE=true`` ("no-layer-aws-switch", lab.standin.function_net.AWS_SWITCH_ENV; not run,
  and said so, when the runtime-kind botocore predates it), the layer on, and the layer on with no
  packet leaving the frozen environment.
* Per configuration one execution environment (lab.standin.lambda_env, CPython 3.12) at ``--memory-mb``'s
  CPU share with a real-size trust store (as make demo: lab/standin/cpu_share.py, lab/standin/trust_store.py) running
  lab/experiments/soak/task/soak_threads.py: each invocation 1-64 checked puts over 1-32 threads on one
  module-level client.
* Rounds from lab.experiments.soak.chaos (one seed, the same for every configuration): an idle gap of
  0.1 T - 3 T with every environment frozen, the NAT mode switching between reset and silent drop,
  the TLS front or DynamoDB Local restarted during some gaps, then one invocation per
  configuration, one after the other (never side by side: 2 cores, and a put slowed by CPU
  contention would look like a hang). The order rotates every round.
* After the deadline, an audit of the whole table, then the report (lab.experiments.soak.report) and the plot
  (lab.experiments.soak.plot, when matplotlib is there).
"""

from __future__ import annotations

import argparse
import io
import json
import random
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from bench.rows import measured_on
from lab import REPO
from lab.standin import cpu_share
from lab.net import nat
from lab.standin.driver import sleep_until
from lab.services.dynamodb import DynamoDBLocal
from lab.standin.function_net import (AWS_SWITCH_ENV, FunctionNetwork, aws_switch_missing, create_table, keepalive_env,
                              lab_client, scaled_timers)
from lab.standin.lambda_env import extract_layer, runtime_python
from lab.experiments.progress import Progress
from lab.standin.runtime_prefix import runtime_botocore
from lab.experiments.soak.chaos import schedule
from lab.net.tls_front import TLSFront

TASK = Path(__file__).resolve().parent / "task"
TABLE = "soak"
PYTHON = "3.12"
# The endpoint closes a connection idle for this many NAT timeouts: gaps between T and this meet
# only the NAT's verdict, longer ones the endpoint's FIN as well (if the NAT still passes it).
ENDPOINT_IDLE_T = 2.5
WARM_UP = {"puts": 64, "threads": 32}  # fills the pool before RSS and fds are taken as baseline


@dataclass
class Configuration:
    name: str
    layer: bool
    no_packets: bool
    workload: str = "threads"
    env: dict = field(default_factory=dict)  # more of the function's variables


AWS_SWITCH = Configuration("no-layer-aws-switch", layer=False, no_packets=False, env=AWS_SWITCH_ENV)
CONFIGURATIONS = [
    Configuration("no-layer", layer=False, no_packets=False),
    AWS_SWITCH,
    Configuration("layer-on", layer=True, no_packets=False),
    Configuration("layer-on-nopkt", layer=True, no_packets=True),
]
# The aiobotocore variant (``--aio``): the same rounds through soak_aio.handler, concurrent tasks
# instead of threads, in a task folder that also holds aiobotocore (``aio_task``).
AIO_CONFIGURATIONS = [
    Configuration("no-layer-aio", layer=False, no_packets=False, workload="aio"),
    Configuration("layer-on-aio", layer=True, no_packets=False, workload="aio"),
]
# workload -> handler; the task folder is task/ beside this file, or the aio task folder for "aio".
WORKLOADS = {"threads": "soak_threads.handler", "aio": "soak_aio.handler"}


def aio_task() -> Path:
    """The aio task folder: the async example's (lab/async-requirements.txt installed by
    lab.experiments.async_patterns.run.async_task, made on first use) plus soak_aio.py and soak_check.py."""
    from lab.experiments.async_patterns.run import async_task

    folder = async_task(PYTHON)
    for module in ("soak_aio.py", "soak_check.py"):
        shutil.copy2(TASK / module, folder / module)
    return folder


class Backend:
    """DynamoDB Local plus a TLS front, each restartable; shaped like DynamoDBLocal for
    lab.standin.function_net (``tls_address``, ``add_hostnames``, ``ca_bundle_path``, ``client_kwargs``)."""

    def __init__(self) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix="lab-soak-", dir="/dev/shm"))
        (self.workdir / "db").mkdir()
        self.jvm = DynamoDBLocal(tls=False, db_path=self.workdir / "db")
        self.tls: Optional[TLSFront] = None

    def start(self) -> "Backend":
        self.jvm.start()
        self.tls = TLSFront(("127.0.0.1", self.jvm.port), workdir=self.workdir / "tls").start()
        return self

    def stop(self) -> None:
        if self.tls is not None:
            self.tls.stop()
        self.jvm.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def restart(self, kind: str) -> float:
        """Restart the TLS front (same port, same CA) or the JVM (same port, same data); returns
        the wall time at which it answers again."""
        if kind == "tls":
            port = self.tls.port
            self.tls.stop()
            self.tls.listen_port = port
            self.tls.start()
        else:
            self.jvm.stop()
            self.jvm.start()
        return time.time()

    tls_address = property(lambda self: self.tls.address)
    ca_bundle_path = property(lambda self: self.tls.ca_bundle_path)

    def add_hostnames(self, *names: str) -> None:
        self.tls.add_hostnames(*names)

    def client_kwargs(self) -> dict:
        return {"endpoint_url": self.tls.url(), "verify": self.tls.ca_bundle_path}


def invocation_record(config: Configuration, round_index: int, record, gap_s, accepted: int) -> dict:
    """What the report needs from one invocation, as plain data (JSON-able)."""
    return {"configuration": config.name, "workload": config.workload, "round": round_index, "ok": record.ok,
            "error": None if record.ok else str(record.outcome.body)[:300],
            "gap_s": gap_s, "duration_ms": record.duration_ms,
            "result": record.result if record.ok else None,
            "counters": {k: record.counters.get(k) for k in
                         ("attempts", "retries", "new_connections", "connection_errors",
                          "dropped_replaced")},
            "tcp_connects": accepted}


def audit(backend: Backend, prefixes: dict) -> dict:
    """Every item of the table, by configuration: key -> counter (a full consistent scan)."""
    client = lab_client(backend)
    found: dict = {name: {} for name in prefixes}
    kwargs = {"TableName": TABLE, "ConsistentRead": True}
    for _ in range(100000):
        page = client.scan(**kwargs)
        for item in page["Items"]:
            key = item["pk"]["S"]
            for name, prefix in prefixes.items():
                if key.startswith(prefix):
                    found[name][key] = int(item["n"]["N"])
        if "LastEvaluatedKey" not in page:
            return found
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    raise RuntimeError("audit: scan did not end")


def run_soak(*, duration_s: float, seed: int, nat_timeout: int, opt: Path, log=print,
             configurations: tuple = tuple(CONFIGURATIONS), tasks: Optional[dict] = None,
             memory_mb: Optional[int] = None, progress: Optional[Progress] = None) -> dict:
    """The whole soak; returns the raw data (see lab.experiments.soak.report.build_report). ``memory_mb``: the
    functions' memory size (CPU share), None = full CPU. ``progress``: the status line, if any."""
    timers = scaled_timers(nat_timeout)
    rounds = schedule(seed, duration_s, nat_timeout)
    progress = progress if progress is not None else Progress("soak", stream=io.StringIO())  # silent
    backend = Backend()
    networks: dict = {}
    functions: dict = {}
    raw = {"seed": seed, "duration_s": duration_s, "nat_timeout_s": nat_timeout, "timers": timers,
           "memory_mb": memory_mb,
           "endpoint_idle_s": ENDPOINT_IDLE_T * nat_timeout, "invocations": [], "warm_up": [],
           "restarts": [], "modes": [], "rounds": []}
    run_id = "%d-%d" % (seed, int(time.time()))
    prefixes = {c.name: "%s/%s/" % (run_id, c.name) for c in configurations}
    try:
        backend.start()
        create_table(backend, TABLE)
        for config in configurations:
            progress.show("cold start", config.name)
            network = FunctionNetwork(backend, nat_timeout=nat_timeout, mode=rounds[0].nat_mode).start()
            networks[config.name] = network
            network.netem.idle_timeout = ENDPOINT_IDLE_T * nat_timeout
            network.netem.idle_action = "fin"
            env = {**keepalive_env(on=config.layer, **timers, debug=False), **config.env}
            task = (tasks or {}).get(config.workload, TASK)
            fn = network.function(task, WORKLOADS[config.workload], table=TABLE, python=PYTHON,
                                  opt=opt if config.layer else None, env=env, memory_mb=memory_mb)
            functions[config.name] = fn.start()
        log("Soak: %d s, seed %d, NAT timeout T=%d s (350 s scaled), endpoint closes idle "
            "connections after %.1f s; layer timers %s" % (duration_s, seed, nat_timeout,
                                                         ENDPOINT_IDLE_T * nat_timeout, timers))
        started = time.time()
        raw["started"] = started
        last_end = {}

        def invoke(config: Configuration, round_index: int, event: dict):
            """One invocation of ``config``'s function (thawed for it when no packet may leave it
            between invocations); returns it and its record (gap since the previous one, if any)."""
            network, fn = networks[config.name], functions[config.name]
            phase = "warm-up" if round_index < 0 else "round %d, %.0f/%.0f s" % (
                round_index, time.monotonic() - (deadline - duration_s), duration_s)
            progress.show(phase, config.name)
            if config.no_packets and network.nat.frozen:
                network.nat.thaw()
            begin = time.monotonic()
            before = network.netem.accepted
            record = fn.invoke(event, 120.0)
            gap_s = begin - last_end[config.name] if config.name in last_end else None
            entry = invocation_record(config, round_index, record, gap_s, network.netem.accepted - before)
            if config.no_packets:
                network.nat.freeze()
            last_end[config.name] = time.monotonic()
            progress.step(phase, config.name)
            return record, entry

        for config in configurations:
            record, entry = invoke(config, -1, dict(WARM_UP, prefix=prefixes[config.name] + "warm"))
            raw["warm_up"].append(entry)
            if not record.ok:
                raise RuntimeError("%s: warm-up failed: %s" % (config.name, record.outcome.body))
        deadline = time.monotonic() + duration_s
        gap_start = time.monotonic()
        for chaos in rounds:
            if time.monotonic() >= deadline:
                break
            raw["rounds"].append(chaos.as_dict())
            for network in networks.values():
                if network.nat.mode != chaos.nat_mode:
                    network.nat.set_mode(chaos.nat_mode)
            raw["modes"].append({"t": time.time(), "mode": chaos.nat_mode})
            if chaos.restart:
                sleep_until(gap_start + chaos.restart_at * chaos.gap_s)
                began = time.time()
                back = backend.restart(chaos.restart)
                raw["restarts"].append({"kind": chaos.restart, "t": began, "back": back})
                log("  round %d: restarted %s (%.1f s)" % (chaos.index, chaos.restart, back - began))
            progress.show("round %d: gap %.1f s" % (chaos.index, chaos.gap_s), "all frozen")
            sleep_until(gap_start + chaos.gap_s)
            turn = chaos.index % len(configurations)
            order = configurations[turn:] + configurations[:turn]
            done = []
            for config in order:
                event = {"prefix": "%s%d" % (prefixes[config.name], chaos.index),
                         "puts": chaos.puts, "threads": chaos.threads}
                done.append(invoke(config, chaos.index, event)[1])
            raw["invocations"].extend(done)
            gap_start = time.monotonic()
            log("  round %d: gap %.1f s, %s, %d puts / %d threads: %s" % (
                chaos.index, chaos.gap_s, chaos.nat_mode, chaos.puts, chaos.threads,
                ", ".join("%s %s" % (i["configuration"], _summary(i)) for i in done)))
        progress.show("audit", "the whole table")
        raw["ended"] = time.time()
        for network in networks.values():
            network.nat.thaw()
        raw["audit"] = audit(backend, prefixes)
        raw["prefixes"] = prefixes
        raw["total_s"] = raw["ended"] - started
        return raw
    finally:
        for fn in functions.values():
            fn.stop()
        for network in networks.values():
            network.stop()
        backend.stop()


def _summary(invocation: dict) -> str:
    if not invocation["ok"]:
        return "FAILED"
    puts = invocation["result"]["puts"]
    bad = sum(1 for p in puts if p["error"] or p["n"] != 1)
    retries = sum(p["retries"] for p in puts)
    return "%.0f ms%s%s" % (invocation["duration_ms"], " %d bad" % bad if bad else "",
                            " %d retries" % retries if retries else "")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--zip", default=str(REPO / "build" / "layer.zip"), help="the built layer")
    p.add_argument("--duration", type=float, default=300.0, help="seconds of rounds (warm-up extra)")
    p.add_argument("--seed", type=int, default=None, help="fault schedule seed (default: random)")
    p.add_argument("--nat-timeout", type=int, default=4, help="T: NAT idle timeout, s (AWS: 350)")
    p.add_argument("--json", default=str(REPO / "build" / "soak.json"))
    p.add_argument("--raw", default=str(REPO / "build" / "soak-raw.json"))
    p.add_argument("--png", default=str(REPO / "build" / "soak.png"), help="'' for no plot")
    p.add_argument("--aio", action="store_true", help="also the aiobotocore variant")
    p.add_argument("--memory-mb", type=int, default=128,
                   help="the functions' memory size: CPU share (1769 MB = 1 vCPU), default 128; 0: no quota")
    return p.parse_args(argv)


def main(argv=None) -> int:
    from lab.experiments.soak.report import build_report, print_table

    args = parse_args(argv)
    reason = nat.unavailable_reason()
    if reason:
        print("make soak needs network namespaces: " + reason, file=sys.stderr)
        return 1
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM stops it as Ctrl-C does
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 10 ** 6)
    runtime_python(PYTHON)
    workdir = Path(tempfile.mkdtemp(prefix="lab-soak-opt-"))
    progress = Progress("soak %s, seed %d" % ("%d MB" % args.memory_mb if args.memory_mb else "full CPU", seed))
    try:
        opt = extract_layer(args.zip, workdir / "opt")
        configurations = CONFIGURATIONS + (AIO_CONFIGURATIONS if args.aio else [])
        not_run = aws_switch_missing(runtime_botocore(PYTHON))
        if not_run:
            configurations.remove(AWS_SWITCH)
            print("%s: %s" % (AWS_SWITCH.name, not_run), flush=True)
        tasks = {"aio": aio_task()} if args.aio else {}
        print(cpu_share.describe(args.memory_mb) + "; trust store: the SDK's default bundle + the lab CA",
              flush=True)
        raw = run_soak(duration_s=args.duration, seed=seed, nat_timeout=args.nat_timeout, opt=opt,
                       log=progress.print, configurations=tuple(configurations), tasks=tasks,
                       memory_mb=args.memory_mb or None, progress=progress)
    finally:
        progress.close()
        shutil.rmtree(workdir, ignore_errors=True)
    report = build_report(raw)
    report["measured_on"] = measured_on()  # where, when, at what load (bench/rows.py)
    report["runtime_botocore"] = runtime_botocore(PYTHON)
    if not_run:
        report["not_run"] = {AWS_SWITCH.name: not_run}
    for path, data in ((args.raw, raw), (args.json, report)):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(data, indent=1) + "\n")
    print_table(report)
    if not_run:
        print("| %s | %s |" % (AWS_SWITCH.name, not_run))
    print("Wrote %s (raw data: %s)" % (args.json, args.raw))
    if args.png:
        try:
            from lab.experiments.soak.plot import plot
        except ImportError as error:
            print("no plot (%s)" % error, file=sys.stderr)
        else:
            plot(raw, Path(args.png))
            print("Plot: %s" % args.png)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
