"""``make demo``: the example function with no layer, the layer switched off, and switched on,
against DynamoDB Local over TLS, behind an emulated RTT and a NAT that forgets idle flows.

What runs (everything on this machine, nothing reaches AWS):

* DynamoDB Local (a JVM) behind the lab's TLS front, one table.
* Configurations: no layer (the runtime-kind boto3, lab/standin/runtime_prefix.py: RUNTIME_BOTO3), no
  layer with AWS's own ``BOTOCORE_TCP_KEEPALIVE=true`` (lab.standin.function_net.AWS_SWITCH_ENV; shown as
  "not run" when the runtime-kind botocore predates it), the layer switched off, and on.
* Per configuration *and* handler, its own network (lab.standin.function_net): a NAT namespace in reset mode
  with the idle timeout scaled down from 350 s, and a Netem hop adding the RTT. Own networks keep
  connection counts (Netem's accepted connections) per configuration.
* Per network one execution environment (lab.standin.lambda_env, CPython 3.12 or --python) running the untouched
  examples/put_item handler: ``app.handler`` (one put) and ``app.handler_ten`` (ten puts).
* Phases: one warm-up invocation (not counted: the cold start's first connection), a steady phase
  (one invocation per second), then a gap phase (each invocation after an idle gap longer than the
  NAT timeout, the process frozen with SIGSTOP through the gap, as Lambda freezes it).
* Optionally (``--no-packets``, on by default) one more layer-on configuration whose gap phase runs
  in the other freeze mode: no packet leaves the namespace during a gap (so keep-alive probes
  cannot refresh the NAT and the layer's MAX_IDLE must replace the connection), and the same with
  TLS session resumption switched off (``AWS_PYTHON_KEEPALIVE_TLS_RESUME=0``): the replacement's
  handshake resumed vs in full, side by side.

Realism (issue 14): each environment runs at ``--memory-mb``'s CPU share (a cgroup quota,
lab/standin/cpu_share.py; 1769 MB = 1 vCPU) with AWS_LAMBDA_FUNCTION_MEMORY_SIZE set to match, and verifies
TLS against a real-size trust store (the SDK's default bundle + the lab CA, lab/standin/trust_store.py).
Default 128 MB: the size the Lambda console gives a new function, which "many developers also
choose" (AWS Lambda operator guide, "Memory and computing power"). On a terminal a status line on
stderr shows phase, configuration and invocations done (lab/experiments/progress.py).

Every configuration runs at the same time, in threads, with start times staggered across the second
so that their invocations do not overlap on this 2-core machine. Everything started is stopped at
the end, also on Ctrl-C (the lab modules also stop what they started at interpreter exit).
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from lab import REPO
from lab.experiments.demo.shared import (LAYER_ON, NO_LAYER, SWITCH_OFF, Config, begin, call_ms, exit_with,
                                        print_time_scale, side_by_side, warm_jvm)
from lab.experiments.progress import Progress
from lab.services.dynamodb import DynamoDBLocal
from lab.standin import cpu_share, driver
from lab.standin.function_net import (AWS_SWITCH_ENV, CountingFunction, FunctionNetwork, aws_switch_missing,
                                      create_table, keepalive_env, run_gaps)
from lab.standin.lambda_env import PYTHON_MINORS, extract_layer
from lab.standin.runtime_prefix import runtime_botocore
from lab.standin.trust_store import certificates

EXAMPLE = REPO / "examples" / "put_item"
TABLE = "demo"
HANDLERS = {"handler": "1 put", "handler_ten": "10 puts"}
PYTHON = "3.12"
MEMORY_MB = 128  # the Lambda console's default for a new function (see the docstring)


AWS_SWITCH = Config("aws", "no layer, BOTOCORE_TCP_KEEPALIVE=true", layer=False, on=False, env=AWS_SWITCH_ENV)
CONFIGS = [NO_LAYER, AWS_SWITCH, SWITCH_OFF, LAYER_ON]
NO_PACKETS = Config("on-nopkt", "layer on, no packet leaves the frozen env", layer=True, on=True,
                    no_packets=True, steady=False)
# The same with TLS session resumption off (resume.py): the replacement handshake in full, side by side.
NO_PACKETS_FULL = Config("on-nopkt-full", "layer on, no packet leaves the frozen env, TLS resume off",
                         layer=True, on=True, no_packets=True, steady=False,
                         env={"AWS_PYTHON_KEEPALIVE_TLS_RESUME": "0"})


@dataclass
class Run:
    """One configuration x handler: its records per phase, and Netem's connection counts."""

    config: Config
    handler: str
    phases: dict = field(default_factory=dict)  # phase name -> [Invocation]
    error: Optional[BaseException] = None
    fn: object = None  # the LambdaFunction while it runs (stopped from the main thread on Ctrl-C)
    phase: str = "start"  # what it is doing now (the progress line)


def run_one(run: Run, network: FunctionNetwork, offset: float, stop: threading.Event, opt: Optional[Path],
            timers: dict, args, progress: Progress) -> None:
    env = {**keepalive_env(on=run.config.on, **timers, debug=False), **run.config.env}
    try:
        run.phase = "cold start"
        progress.show(run.phase, run.config.name)
        with network.function(EXAMPLE, "app." + run.handler, table=TABLE, python=args.python,
                              opt=opt if run.config.layer else None, env=env,
                              memory_mb=args.memory_mb or None) as raw:
            run.fn = raw
            fn = progress.wrap(CountingFunction(raw, network),
                               lambda: (run.phase, "%s / %s" % (run.config.name, HANDLERS[run.handler])))
            time.sleep(offset)
            run.phase = "warm-up"
            run.phases["warm-up"] = [fn.invoke({})]
            if not stop.is_set():
                # A configuration without a reported steady phase still runs one ("filler", left out
                # of the tables and the plot), so that every gap phase happens at the same time.
                phase = "steady" if run.config.steady else "filler"
                run.phase = phase
                run.phases[phase] = driver.run(fn, {}, n=args.steady, interval_s=1.0)
            if not stop.is_set():
                gaps = [args.gap] * args.gaps
                run.phase = "gaps"
                # After the steady phase the function is already warm: the first gap starts now.
                run.phases["gaps"] = run_gaps(fn, network, {}, gaps, no_packets=run.config.no_packets,
                                              warm_up=False)
    except BaseException as error:  # reported by the main thread
        run.error = error


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--zip", default=str(REPO / "build" / "layer.zip"), help="the built layer")
    p.add_argument("--png", default=str(REPO / "build" / "demo.png"))
    p.add_argument("--json", default=str(REPO / "build" / "demo.json"),
                   help="the tables' rows (docs/demo.md and README render from them: make docs)")
    p.add_argument("--rtt-ms", type=float, default=4.0, help="emulated round-trip time")
    p.add_argument("--nat-timeout", type=int, default=6, help="NAT idle timeout, s (AWS: 350)")
    p.add_argument("--steady", type=int, default=20, help="invocations in the steady phase (1/s)")
    p.add_argument("--gaps", type=int, default=5, help="invocations in the gap phase")
    p.add_argument("--gap", type=float, default=None, help="idle gap, s (default: NAT timeout + 2)")
    p.add_argument("--jvm-warmup", type=int, default=900, help="puts to warm DynamoDB Local first")
    p.add_argument("--python", default=PYTHON, choices=PYTHON_MINORS,
                   help="CPython minor of the stand-in runtime (make demo: 3.12, else one this machine has)")
    p.add_argument("--memory-mb", type=int, default=MEMORY_MB,
                   help="the functions' memory size: CPU share (1769 MB = 1 vCPU) and "
                        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE (default %d; 0: no quota)" % MEMORY_MB)
    p.add_argument("--no-packets", action=argparse.BooleanOptionalAction, default=True,
                   help="also run the layer-on gap phase with no packet leaving the frozen env "
                        "(with and without TLS session resumption)")
    args = p.parse_args(argv)
    if args.gap is None:
        args.gap = args.nat_timeout + 2.0
    return args


def main(argv=None) -> int:
    from bench.rows import write_rows
    from lab.experiments.demo.plot import plot
    from lab.experiments.demo.report import json_rows, print_tables

    args = parse_args(argv)
    if not begin("demo", args.python):
        return 1
    configs = CONFIGS + ([NO_PACKETS, NO_PACKETS_FULL] if args.no_packets else [])
    botocore = runtime_botocore(args.python)
    not_run = {}
    missing = aws_switch_missing(botocore)
    if missing:
        not_run[AWS_SWITCH.label] = missing
        configs.remove(AWS_SWITCH)
    print("Lab: DynamoDB Local over TLS, RTT %.1f ms (Netem), NAT in reset mode, CPython %s stand-in"
          % (args.rtt_ms, args.python))
    print(cpu_share.describe(args.memory_mb))
    print("No layer = the runtime-kind botocore %s (RUNTIME_BOTO3)" % botocore)
    timers = print_time_scale(args.nat_timeout,
                              lambda scale: "gaps of %.1f s stand for %.0f s" % (args.gap, args.gap / scale))
    print("Phases: 1 warm-up (not counted), steady %d x 1/s, gaps %d x %.1f s (process frozen)"
          % (args.steady, args.gaps, args.gap))
    started = time.monotonic()
    runs = [Run(c, h) for h in HANDLERS for c in configs]
    progress = Progress("demo %d MB" % args.memory_mb if args.memory_mb else "demo, full CPU",
                        total=len(runs) * (1 + args.steady + args.gaps))
    networks: list[FunctionNetwork] = []
    with DynamoDBLocal() as ddb:
        try:
            create_table(ddb, TABLE)
            warm_jvm(ddb, args.jvm_warmup, TABLE)
            opt = extract_layer(args.zip, REPO / "build" / "demo" / "opt")
            for _ in runs:
                networks.append(FunctionNetwork(ddb, nat_timeout=args.nat_timeout, mode="reset",
                                                rtt=args.rtt_ms / 1000.0).start())
            bundle = networks[0].function_env(TABLE)["AWS_CA_BUNDLE"]
            print("Trust store: %d certificates (the SDK's default bundle + the lab CA), AWS_CA_BUNDLE=%s"
                  % (certificates(bundle), bundle))
            print("Running %d environments side by side (%s x %s) ..."
                  % (len(runs), "/".join(c.name for c in configs), "/".join(HANDLERS)), flush=True)
            side_by_side(runs, networks, run_one, lambda run: "demo-%s-%s" % (run.config.name, run.handler),
                         (opt, timers, args, progress))
        finally:
            progress.close()
            for network in networks:
                network.stop()  # when a network failed to start: side_by_side has not run
    failed = [r for r in runs if r.error is not None]
    for r in failed:
        print("%s / %s failed: %r" % (r.config.name, r.handler, r.error), file=sys.stderr)
    print_tables(runs, HANDLERS, call_ms, not_run)
    write_rows(args.json, json_rows(runs, HANDLERS, call_ms), memory_mb=args.memory_mb, rtt_ms=args.rtt_ms,
               nat_timeout_s=args.nat_timeout, gap_s=args.gap, stand_in_python=args.python,
               runtime_botocore=botocore, timers=timers, not_run=not_run)
    plot(runs, HANDLERS, call_ms, args, Path(args.png))
    print("Plot: %s" % args.png)
    print("Total %.0f s" % (time.monotonic() - started))
    return 1 if failed else 0


if __name__ == "__main__":
    exit_with(main)
