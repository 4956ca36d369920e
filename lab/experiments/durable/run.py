"""``make demo-durable``: a durable function's checkpoint client across waits longer than the NAT timeout.

Prints the table, writes build/demo-durable.json and build/demo-durable.png. Root (network
namespaces). Run in the venv of lab/experiments/durable/runner-requirements.txt (it holds the local
runner), with the function's packages installed by make into .venv/durable-task.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from bench.rows import interpreter_version, write_rows  # first: its import time is the run's start
from lab.experiments.durable import experiment, report
from lab.standin.function_net import scaled_timers
from lab.standin.lambda_env import runtime_python

REPO = experiment.REPO


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--zip", default=str(REPO / "build" / "layer.zip"), help="the built layer")
    p.add_argument("--json", default=str(REPO / "build" / "demo-durable.json"))
    p.add_argument("--png", default=str(REPO / "build" / "demo-durable.png"))
    p.add_argument("--deps", default=str(experiment.default_deps()),
                   help="the function's packages (pip install --target of function-requirements.txt)")
    p.add_argument("--pythons", default="3.13,3.14", help="CPython minors (durable functions: 3.13, 3.14)")
    p.add_argument("--configs", default=",".join(experiment.CONFIGS), help="configurations to run")
    p.add_argument("--modes", default="reset,drop", help="NAT modes: reset (RST) and/or drop (silent)")
    p.add_argument("--rounds", type=int, default=3, help="waits per execution (= resumes measured)")
    p.add_argument("--nat-timeout", type=int, default=6, help="NAT idle timeout, s (AWS: 350)")
    p.add_argument("--wait", type=int, default=None, help="each wait, whole s (default: NAT timeout + 2)")
    p.add_argument("--rtt-ms", type=float, default=4.0, help="emulated round-trip time")
    p.add_argument("--memory-mb", type=int, default=128,
                   help="the functions' memory size: CPU share (1769 MB = 1 vCPU); 0: no quota")
    p.add_argument("--invocation-timeout", type=int, default=180, help="the runner's function timeout, s")
    args = p.parse_args(argv)
    args.pythons = [v.strip() for v in args.pythons.split(",") if v.strip()]
    args.configs = [v.strip() for v in args.configs.split(",") if v.strip()]
    args.modes = [v.strip() for v in args.modes.split(",") if v.strip()]
    unknown = [c for c in args.configs if c not in experiment.CONFIGS]
    if unknown:
        p.error("unknown configuration(s) %s; known: %s" % (unknown, ", ".join(experiment.CONFIGS)))
    if args.wait is None:
        args.wait = args.nat_timeout + 2
    return args


def run(args, service) -> tuple:
    """The whole experiment with a started service; returns (table rows, run-wide JSON fields)."""
    timers = scaled_timers(args.nat_timeout)
    deps = Path(args.deps)
    sdk = experiment.sdk_version(deps)
    runs = experiment.run_all(args, service, timers, deps, REPO / "build" / "demo-durable")
    for r in runs:
        if r.error is not None:
            print("%s failed: %r" % (r.key, r.error), file=sys.stderr)
    table_rows = report.rows(runs, sdk)
    versions = {minor: interpreter_version(str(runtime_python(minor))) for minor in args.pythons}
    for row in table_rows:
        row["python_version"] = versions[row["python"]]
    fields = {
        "interpreters": ["CPython %s stand-in" % versions[p] for p in args.pythons], "sdk_version": sdk,
        "nat_timeout_s": args.nat_timeout, "wait_s": args.wait, "rtt_ms": args.rtt_ms,
        "memory_mb": args.memory_mb, "rounds": args.rounds,
        "layer_timers": timers, "user_agents": sorted(service.front.user_agents()),
    }
    return table_rows, fields


def main(argv=None) -> int:
    from lab.experiments.demo.shared import begin, print_time_scale
    from lab.experiments.durable.plot import plot
    from lab.services.durable import DurableService

    args = parse_args(argv)
    if not begin("demo-durable", args.pythons[0]):
        return 1
    for minor in args.pythons[1:]:
        runtime_python(minor)
    print("Lab: a durable function (aws-durable-execution-sdk-python %s, bundled) on CPython %s stand-ins, "
          "AWS's local runner as the durable service behind HTTPS keep-alive, RTT %.1f ms, %s"
          % (experiment.sdk_version(Path(args.deps)), "/".join(args.pythons), args.rtt_ms,
             "%d MB's CPU share" % args.memory_mb if args.memory_mb else "full CPU"))
    print_time_scale(args.nat_timeout, lambda scale: "each wait %d s stands for %.0f s; the SDK's read_timeout "
                     "stays its own %d s" % (args.wait, args.wait / scale, experiment.SDK_READ_TIMEOUT_S))
    started = time.monotonic()
    with DurableService(invocation_timeout=args.invocation_timeout) as service:
        print("Running %d executions side by side (%s x %s x NAT %s), %d waits each ..."
              % (len(args.pythons) * len(args.configs) * len(args.modes), "/".join(args.pythons),
                 "/".join(args.configs), "/".join(args.modes), args.rounds), flush=True)
        table_rows, fields = run(args, service)
    print()
    print(report.markdown(table_rows))
    print()
    print("Checkpoint User-Agents seen by the service end in: " + "; ".join(
        sorted({ua.split("Botocore/")[-1] for ua in fields["user_agents"]})))
    write_rows(args.json, table_rows, **fields)
    plot(table_rows, Path(args.png))
    print("Plot: %s" % args.png)
    print("Total %.0f s" % (time.monotonic() - started))
    return 1 if any(r["error"] or r["failed"] for r in table_rows) else 0


if __name__ == "__main__":
    from lab.experiments.demo.shared import exit_with

    exit_with(main)
