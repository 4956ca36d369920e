"""``make demo-longcall``: a synchronous Invoke that outlasts the NAT's idle timeout, with AWS's advice,
stock and with the layer, side by side, behind a NAT that resets and one that drops silently.

The case (issue 37): the Invoke API's documentation says "Synchronous invocations can run for up to
30 minutes. Set the read timeout of your client higher than the function timeout, and turn on TCP
keep-alive." botocore's keep-alive is SO_KEEPALIVE alone (``Config(tcp_keepalive=True)`` or
``BOTOCORE_TCP_KEEPALIVE=true``), whose first probe Linux sends after 7 200 s; an AWS NAT gateway
forgets a flow after 350 s without a packet. While the callee works nothing crosses the connection,
so its answer arrives at a NAT that no longer knows the flow and is dropped; the caller waits for
its read timeout, and botocore retries the Invoke: the callee runs a second time.

What runs (everything on this machine, nothing reaches AWS):

* One cell per configuration x NAT mode, all at the same time, each with its own network
  (callee.CallNetwork: a NAT namespace whose conntrack idle timeout is the scaled 350 s, in reset
  or drop mode, and a TLS front on its veth) and its own callee (callee.SlowCallee behind lab's
  Invoke endpoint), which counts the requests it receives and answers each after the scaled 400 s.
* The caller is a Lambda function in the stand-in (lab.standin.lambda_env: awslambdaric, the
  runtime's bootstrap, the runtime-kind boto3 RUNTIME_BOTO3), task/caller.py: a boto3 Lambda client
  made at import with AWS's advice, ``Config(read_timeout=<scaled 450 s>, tcp_keepalive=True)``,
  and one ``invoke`` per invocation. aiobotocore's caller is task/caller_aio.py in the async
  example's task folder (aiobotocore bundled with its botocore). The Managed Instances cells run
  the same caller in awslambdaric's multi-concurrent mode (2 workers, never frozen), both workers
  holding a long call at once.
* The caller's own invocation is bounded by the scaled 800 s (its function timeout: the read timeout
  plus one NAT timeout): after it the lab records "caller timed out" and stops the function, so a
  cell whose answer was lost ends there (by then botocore has retried once; its later retries would
  only add executions).
* Managed Instances may run an invocation 5 400 s: two more cells hold a call that long (read
  timeout 5 450 s, bound 5 800 s), scaled; at AWS's scale (90 minutes) only when named (--configs).

Time scale: ``--nat-timeout`` (default 5 s) stands for 350 s; the callee's 400 s, the read timeout's
450 s, the caller's 800 s and the layer's timers (lab.standin.function_net.scaled_timers) scale with
it. ``--nat-timeout 350`` is the real scale (the layer's shipped timers; ~14 min), written to
build/longcall-350.json instead of build/longcall.json.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from lab import REPO
from lab.experiments.demo.shared import exit_with, interrupt_on_signals
from lab.experiments.longcall.callee import CallNetwork, SlowCallee
from lab.standin.function_net import AWS_SWITCH_ENV, DEFAULTS, NAT_TIMEOUT_S, keepalive_env, scaled_timers

TASK = Path(__file__).resolve().parent / "task"
# AWS's numbers the lab scales: how long the callee works; the caller's read timeout is 50 s above it
# (above the callee's duration, as advised) and its own function timeout one NAT timeout after that,
# time for botocore's first retry to reach the callee. A Managed Instances invocation may run 5 400 s.
ANSWER_S = 400
READ_MARGIN_S = 50
LMI_INVOCATION_S = 5400
MODES = ("reset", "drop")
ON_DEMAND_PYTHON = "3.12"
LMI_PYTHON = "3.13"  # Managed Instances: python3.13+
LMI_WORKERS = 2


@dataclass
class Config:
    """One caller configuration: its code (botocore or aiobotocore), layer flavor (None: no layer),
    extra variables, and whether it runs as a Managed Instances environment."""

    name: str
    label: str
    layer: Optional[str] = None  # "full", "hook" or None
    aio: bool = False
    lmi: bool = False
    env: dict = field(default_factory=dict)
    answer_s: int = ANSWER_S  # how long its callee works, at AWS's scale

    @property
    def stock(self) -> bool:
        return self.layer is None


CONFIGS = [
    Config("advice", "stock botocore, AWS's advice (read_timeout, tcp_keepalive=True)"),
    Config("env", "stock botocore, BOTOCORE_TCP_KEEPALIVE=true", env={**AWS_SWITCH_ENV, "LAB_CONFIG_KEEPALIVE": "0"}),
    Config("advice-once", "stock botocore, AWS's advice + total_max_attempts=1", env={"LAB_MAX_ATTEMPTS": "1"}),
    Config("full", "layer, full flavor", layer="full"),
    Config("hook", "layer, hook flavor over the runtime's botocore", layer="hook"),
    Config("aio", "stock aiobotocore, AWS's advice", aio=True),
    Config("aio-layer", "aiobotocore + layer (full flavor)", layer="full", aio=True),
    Config("lmi", "Managed Instances, stock botocore, AWS's advice", lmi=True),
    Config("lmi-layer", "Managed Instances, layer, full flavor", layer="full", lmi=True),
    # The longest call a Managed Instances invocation can hold; left out at AWS's scale (90 minutes).
    Config("lmi-5400", "Managed Instances, stock botocore, AWS's advice, 5 400 s call", lmi=True,
           answer_s=LMI_INVOCATION_S),
    Config("lmi-5400-layer", "Managed Instances, layer, full flavor, 5 400 s call", layer="full", lmi=True,
           answer_s=LMI_INVOCATION_S),
]


@dataclass
class Cell:
    config: Config
    mode: str
    scale: "Scale"
    outcomes: list = field(default_factory=list)  # the caller invocations' runtime outcomes
    requests: int = 0
    answered_by_callee: int = 0
    arrivals_s: list = field(default_factory=list)  # each request's arrival, s after the first invocation
    seconds: Optional[float] = None
    error: Optional[BaseException] = None
    fn: object = None


@dataclass
class Scale:
    nat_timeout: int
    answer: float
    read_timeout: float
    caller_timeout: float
    timers: dict

    @classmethod
    def of(cls, nat_timeout: int, answer_s: int = ANSWER_S) -> "Scale":
        factor = nat_timeout / NAT_TIMEOUT_S
        # At the real scale the layer runs with its shipped defaults: no variable is set.
        timers = {k: v for k, v in scaled_timers(nat_timeout).items() if v != DEFAULTS[k]}
        read = answer_s + READ_MARGIN_S
        return cls(nat_timeout, round(answer_s * factor, 3), round(read * factor, 3),
                   round((read + NAT_TIMEOUT_S) * factor, 3), timers)


def caller_env(config: Config, scale: Scale) -> dict:
    env = {"LAB_READ_TIMEOUT_S": str(scale.read_timeout), **config.env}
    if config.layer is not None:
        env.update(keepalive_env(on=True, **scale.timers, debug=False))
    return env


def run_cell(cell: Cell, endpoint, opts: dict, tasks: dict, stop: threading.Event) -> None:
    """One caller invoking its own slow callee through its own NAT; fills ``cell``. Never raises."""
    config, scale = cell.config, cell.scale
    name = "callee-%s-%s" % (config.name, cell.mode)
    callee = SlowCallee(scale.answer)
    endpoint.register(name, callee)
    network = CallNetwork(endpoint, nat_timeout=scale.nat_timeout, mode=cell.mode)
    try:
        network.start()
        task, handler = tasks["aio" if config.aio else "botocore"]
        # Give each invocation a little longer than the caller's function timeout to report: the
        # lab's bound, not botocore's, ends a cell whose answer was lost.
        with network.function(task, handler, env=caller_env(config, scale),
                              python=LMI_PYTHON if config.lmi else ON_DEMAND_PYTHON,
                              opt=opts.get(config.layer), max_concurrency=LMI_WORKERS if config.lmi else None,
                              init_timeout=60.0) as fn:
            cell.fn = fn
            if stop.is_set():
                return
            started = time.monotonic()
            cell.outcomes = invoke_bounded(fn, {"callee": name}, LMI_WORKERS if config.lmi else 1,
                                           started + scale.caller_timeout)
            # Counted at the caller's bound: what happens after it (the function is stopped) is not the call's.
            cell.requests = callee.requests
            cell.seconds = time.monotonic() - started
            cell.arrivals_s = [round(t - started, 3) for t in callee.arrivals]
    except BaseException as error:  # reported by the main thread
        cell.error = error
    finally:
        cell.answered_by_callee = callee.answered
        callee.stop()
        endpoint.unregister(name)
        network.stop()


def invoke_bounded(fn, event: dict, n: int, deadline: float) -> list:
    """``n`` invocations of ``event`` at once (one per worker in multi-concurrent mode), each waited
    for until ``deadline`` (time.monotonic()) at the latest: the caller's function timeout. Their
    runtime outcomes (lab.standin.runtime_api.Outcome), in order; kind "timeout" past the deadline."""
    if fn.frozen:
        fn.thaw()
    queued = [fn.api.queue(event, max(0.001, deadline - time.monotonic())) for _ in range(n)]
    return [fn.api.wait(invocation, max(0.0, deadline - time.monotonic()))[0] for invocation in queued]


def outcome_of(outcome, scale: Scale) -> tuple:
    """(outcome text, answered?, seconds) of one caller invocation."""
    if outcome.kind == "timeout":
        return "no answer: caller timed out", False, scale.caller_timeout
    body = outcome.body if isinstance(outcome.body, dict) else {}
    if outcome.ok and body.get("answered"):
        return "answer", True, body.get("seconds")
    if outcome.ok and "error" in body:
        return "no answer: %s" % body["error"], False, body.get("seconds")
    return "invocation failed: %s %s" % (outcome.kind, outcome.error_type or ""), False, None


def rows(cells) -> list:
    """One dict per cell: the table's row and the JSON's."""
    out = []
    for cell in cells:
        outcomes = [outcome_of(o, cell.scale) for o in cell.outcomes]
        texts = sorted({text for text, _, _ in outcomes})
        answered = sum(1 for _, ok, _ in outcomes if ok)
        times = [s for _, _, s in outcomes if s is not None]
        invocations = LMI_WORKERS if cell.config.lmi else 1
        out.append({
            "configuration": cell.config.label, "name": cell.config.name, "stock": cell.config.stock,
            "caller": "Managed Instances, %d workers" % LMI_WORKERS if cell.config.lmi else "on-demand",
            "nat_mode": cell.mode, "callee_s_at_aws_scale": cell.config.answer_s, "callee_s": cell.scale.answer,
            "read_timeout_s": cell.scale.read_timeout, "caller_timeout_s": cell.scale.caller_timeout,
            "outcome": "; ".join(texts) if texts else "error: %r" % cell.error,
            "invocations": invocations, "answered": answered,
            "seconds": round(max(times), 2) if times else None,
            "requests_received": cell.requests, "callee_answers_sent": cell.answered_by_callee,
            "client_timeouts": next((o.body["timeouts"] for o in cell.outcomes
                                     if isinstance(o.body, dict) and "timeouts" in o.body), None),
            # What the caller ran on, in its own words: botocore's (and aiobotocore's) version and
            # whether the layer's package was imported (a stock caller must say no).
            "runs_on": next(({k: o.body[k] for k in ("botocore", "aiobotocore", "layer_loaded") if k in o.body}
                             for o in cell.outcomes if isinstance(o.body, dict) and "botocore" in o.body), None),
            "sockets_during_call": [sock for o in cell.outcomes if isinstance(o.body, dict)
                                    for sock in o.body.get("sockets_during_call", [])],
            "sockets": [sock for o in cell.outcomes if isinstance(o.body, dict) for sock in o.body.get("sockets", [])],
            "arrivals_s": cell.arrivals_s, "error": None if cell.error is None else repr(cell.error),
        })
    return out


def verdict(table_rows) -> dict:
    """Issue 37's "done when", per NAT mode: every stock caller lost the answer or ran the callee
    more than once, and every layer caller got every answer from exactly one execution each."""
    out = {}
    for mode in MODES:
        mine = [r for r in table_rows if r["nat_mode"] == mode]
        if not mine:
            continue
        stock_fails = all(r["answered"] < r["invocations"] or r["requests_received"] > r["invocations"]
                          for r in mine if r["stock"])
        layer_once = all(r["answered"] == r["invocations"] == r["requests_received"]
                         for r in mine if not r["stock"])
        out[mode] = {"stock_loses_or_repeats": stock_fails, "layer_answers_once": layer_once}
    return out


HEADER = ("caller", "runtime", "NAT", "outcome", "answered", "time s", "requests received")


def markdown(table_rows) -> str:
    from lab.experiments.demo.report import markdown as table

    def seconds(value):
        return "-" if value is None else "%.1f" % value

    return table([(r["configuration"], r["caller"], "reset" if r["nat_mode"] == "reset" else "silent drop",
                   r["outcome"], "%d / %d" % (r["answered"], r["invocations"]), seconds(r["seconds"]),
                   r["requests_received"]) for r in table_rows], header=HEADER, first_number=4)


def describe_scale(data) -> str:
    """The run's times, each with the AWS-scale time it stands for when scaled."""
    def both(key, aws):
        value = data[key]
        return "%g s" % value if data["nat_timeout_s"] == NAT_TIMEOUT_S else "%g s (for %d s)" % (value, aws)

    read = ANSWER_S + READ_MARGIN_S
    return "NAT idle timeout %s, callee answers after %s, caller's read_timeout %s, caller's own timeout %s" % (
        both("nat_timeout_s", NAT_TIMEOUT_S), both("answer_s", ANSWER_S), both("read_timeout_s", read),
        both("caller_timeout_s", read + NAT_TIMEOUT_S))


def longer_calls(table_rows) -> str:
    """One sentence for the rows whose callee works longer than 400 s at AWS's scale ('' if none)."""
    longer = {r["callee_s_at_aws_scale"]: r for r in table_rows if r.get("callee_s_at_aws_scale", ANSWER_S) != ANSWER_S}
    return "".join(" The %d s rows: callee %s s, read_timeout %s s, caller's own timeout %s s." % (
        aws, r["callee_s"], r["read_timeout_s"], r["caller_timeout_s"]) for aws, r in sorted(longer.items()))


def sockets_read_back(table_rows) -> str:
    """One sentence: what the kernel said about the answered botocore callers' sockets ('' if none)."""
    def timeouts(stock):
        pairs = {(r["client_timeouts"]["read_timeout"], r["client_timeouts"]["connect_timeout"])
                 for r in table_rows if r["stock"] == stock and r.get("client_timeouts")}
        return ", ".join("%g / %g s" % pair for pair in sorted(pairs)) or "-"

    seen = sorted({(s["timeout"], s["SO_KEEPALIVE"], s["TCP_KEEPIDLE"], s["TCP_KEEPINTVL"])
                   for r in table_rows for s in r.get("sockets", [])})
    if not seen:
        return ""
    # An asyncio socket is non-blocking (timeout 0): aiohttp's read timeout runs in the event loop.
    found = "; ".join("%s, SO_KEEPALIVE %d, TCP_KEEPIDLE %d s, TCP_KEEPINTVL %d s" % (
        "timeout %g s" % timeout if timeout else "non-blocking (asyncio)", *options) for timeout, *options in seen)
    return (" Read back after the answer (getsockopt) from the layer's callers' sockets: %s. Client read / "
            "connect timeouts with the layer: %s; stock (the callers that returned): %s." % (
                found, timeouts(False), timeouts(True)))


def in_flight_and_sdks(table_rows) -> str:
    """Two sentences ('' for a run that recorded neither): the in-flight sockets' keep-alive options,
    stock's and the layer's, read halfway through the read timeout; and what each caller ran on."""
    def options(stock):
        seen = sorted({(s["SO_KEEPALIVE"], s["TCP_KEEPIDLE"], s["TCP_KEEPINTVL"]) for r in table_rows
                       if r["stock"] == stock for s in r.get("sockets_during_call", [])})
        return "; ".join("SO_KEEPALIVE %d, TCP_KEEPIDLE %d s, TCP_KEEPINTVL %d s" % o for o in seen) or "-"

    text = ""
    if any(r.get("sockets_during_call") for r in table_rows):
        text += (" Read back halfway through the read timeout, the request in flight: stock %s; with the layer %s."
                 % (options(True), options(False)))
    ran_on = {}
    for r in table_rows:
        if r.get("runs_on"):
            sdk = r["runs_on"]
            key = ("aiobotocore %s over botocore %s" % (sdk["aiobotocore"], sdk["botocore"]) if "aiobotocore" in sdk
                   else "botocore %s" % sdk["botocore"], sdk["layer_loaded"])
            ran_on.setdefault(key, []).append(r["name"])
    if ran_on:
        text += " The callers reported: %s." % "; ".join(
            "%s, layer %s (%s)" % (sdk, "imported" if loaded else "not imported", ", ".join(dict.fromkeys(names)))
            for (sdk, loaded), names in sorted(ran_on.items()))
    return text


def view(data) -> str:
    """docs/longcall.md: the table of one run (make docs)."""
    run = data[next(iter(data))]
    # No variable set: the shipped defaults, whose values the sockets' read-back sentence gives (the
    # kernel's word, not a number typed here that settings.py could outgrow).
    timers = run["layer_timers"] or "the layer's shipped defaults (no timer variable set)"
    if isinstance(timers, dict):
        timers = ", ".join("%s %s s" % (k.upper(), v) for k, v in sorted(timers.items()) if k != "count")
    return ("%s; layer timers: %s. Stand-in callers: CPython %s (on-demand, runtime-kind botocore %s), "
            "CPython %s (Managed Instances).%s%s\n\n%s" % (
                describe_scale(run), timers, run["on_demand_python"], run["runtime_botocore"], run["lmi_python"],
                longer_calls(run["rows"]), sockets_read_back(run["rows"]) + in_flight_and_sdks(run["rows"]),
                markdown(run["rows"])))


def summary(data) -> str:
    """README's "Long calls": per caller and NAT mode, the outcome, its time and the callee's executions."""
    run = data[next(iter(data))]
    by = {(r["name"], r["nat_mode"]): r for r in run["rows"]}
    names = list(dict.fromkeys(r["name"] for r in run["rows"]))
    modes = [m for m in MODES if any(r["nat_mode"] == m for r in run["rows"])]

    def cell(row):
        if row["answered"] == row["invocations"]:
            what = "**answer**"
        else:
            what = row["outcome"].replace("no answer: ", "no answer, ")
        runs = row["requests_received"]
        return "%s after %.0f s; callee ran %d× for %d call%s" % (
            what, row["seconds"], runs, row["invocations"], "s" if row["invocations"] > 1 else "")

    header = ["caller"] + ["NAT %s" % ("resets" if m == "reset" else "drops silently") for m in modes]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name in names:
        first = by[name, modes[0]]
        workers = first["caller"].rpartition(", ")[2] if first["caller"] != "on-demand" else ""
        label = first["configuration"] + (" (%s)" % workers if workers else "")
        lines.append("| " + " | ".join([label] + [cell(by[name, m]) for m in modes]) + " |")
    return "%s.\n\n%s" % (describe_scale(run), "\n".join(lines))


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--zip", default=str(REPO / "build" / "layer.zip"), help="the full flavor's zip")
    p.add_argument("--hook-zip", default=str(REPO / "build" / "layer-hook.zip"), help="the hook flavor's zip")
    p.add_argument("--nat-timeout", type=int, default=5, help="NAT idle timeout, s (AWS: 350; 350 = real scale)")
    p.add_argument("--modes", default=",".join(MODES), help="NAT modes: reset and/or drop")
    p.add_argument("--configs", default="", help="comma-separated configuration names (default: all)")
    p.add_argument("--json", default=None,
                   help="default build/longcall.json, or build/longcall-350.json at --nat-timeout 350")
    args = p.parse_args(argv)
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    wanted = [c.strip() for c in args.configs.split(",") if c.strip()]
    unknown = set(wanted) - {c.name for c in CONFIGS}
    if unknown:
        p.error("unknown configurations: %s" % ", ".join(sorted(unknown)))
    real = args.nat_timeout == NAT_TIMEOUT_S
    # At AWS's scale a 5 400 s call takes 90 minutes: run only when named.
    args.configs = [c for c in CONFIGS if c.name in wanted or not wanted and (not real or c.answer_s == ANSWER_S)]
    if args.json is None:
        args.json = str(REPO / "build" / ("longcall-350.json" if real else "longcall.json"))
    return args


def prepare(args, workdir: Path) -> tuple:
    """The layer roots (full, hook) the configurations need and the callers' task folders."""
    from lab.standin.lambda_env import extract_layer, runtime_python

    flavors = {c.layer for c in args.configs if c.layer}
    opts = {}
    if "full" in flavors:
        opts["full"] = extract_layer(args.zip, workdir / "opt-full")
    if "hook" in flavors:
        opts["hook"] = extract_layer(args.hook_zip, workdir / "opt-hook")
    for python in {LMI_PYTHON if c.lmi else ON_DEMAND_PYTHON for c in args.configs}:
        runtime_python(python)
    tasks = {"botocore": (TASK, "caller.handler")}
    if any(c.aio for c in args.configs):
        from lab.experiments.async_patterns.run import async_task

        folder = async_task(ON_DEMAND_PYTHON)
        for name in ("caller_aio.py", "readback.py"):
            shutil.copyfile(TASK / name, folder / name)
        tasks["aio"] = (folder, "caller_aio.handler")
    return opts, tasks


def run_all(args, workdir: Path) -> list:
    """Every configuration x NAT mode at the same time, each in its own thread and namespace."""
    from lab.services.durable import InvokeEndpoint

    opts, tasks = prepare(args, workdir)
    cells = [Cell(c, m, Scale.of(args.nat_timeout, c.answer_s)) for m in args.modes for c in args.configs]
    endpoint = InvokeEndpoint()
    stop = threading.Event()
    threads = []
    try:
        for cell in cells:
            thread = threading.Thread(target=run_cell, args=(cell, endpoint, opts, tasks, stop),
                                      name="longcall-%s-%s" % (cell.config.name, cell.mode), daemon=True)
            thread.start()
            threads.append(thread)
        for thread in threads:
            while thread.is_alive():
                thread.join(0.5)
    finally:
        stop.set()
        for cell in cells:
            if cell.fn is not None:
                cell.fn.stop()
        endpoint.close()
    return cells


def main(argv=None) -> int:
    from bench.rows import write_rows
    from lab.net import nat
    from lab.standin.runtime_prefix import runtime_botocore

    args = parse_args(argv)
    interrupt_on_signals()
    reason = nat.unavailable_reason()
    if reason:
        print("make demo-longcall needs network namespaces: %s" % reason, file=sys.stderr)
        return 1
    scale = Scale.of(args.nat_timeout)
    botocore = runtime_botocore(ON_DEMAND_PYTHON)
    fields = {"nat_timeout_s": scale.nat_timeout, "answer_s": scale.answer, "read_timeout_s": scale.read_timeout,
              "caller_timeout_s": scale.caller_timeout}
    print("Long call: " + describe_scale(fields))
    for answer_s in sorted({c.answer_s for c in args.configs} - {ANSWER_S}):
        longer = Scale.of(args.nat_timeout, answer_s)
        print("  %d s calls: callee %s s, read_timeout %s s, caller's own timeout %s s"
              % (answer_s, longer.answer, longer.read_timeout, longer.caller_timeout))
    variables = ", ".join("AWS_PYTHON_KEEPALIVE_%s=%s" % (k.upper(), v) for k, v in scale.timers.items())
    print("Layer timers: %s" % (variables or "the shipped defaults (%s)" % DEFAULTS))
    print("Stock = the runtime-kind botocore %s (RUNTIME_BOTO3); %d cells side by side ..."
          % (botocore, len(args.configs) * len(args.modes)), flush=True)
    started = time.monotonic()
    load_start = os.getloadavg()
    workdir = REPO / "build" / "longcall"
    cells = run_all(args, workdir)
    for cell in cells:
        if cell.error is not None:
            print("%s / %s failed: %r" % (cell.config.name, cell.mode, cell.error), file=sys.stderr)
    table_rows = rows(cells)
    print()
    print(markdown(table_rows))
    checks = verdict(table_rows)
    print()
    for mode, check in checks.items():
        print("NAT %s: stock loses the answer or runs the callee twice: %s; the layer answers once: %s"
              % (mode, check["stock_loses_or_repeats"], check["layer_answers_once"]))
    write_rows(args.json, table_rows, **fields, layer_timers=scale.timers, verdict=checks,
               machine="%s, %d cores" % (platform.machine(), os.cpu_count()), runtime_botocore=botocore,
               on_demand_python=ON_DEMAND_PYTHON, lmi_python=LMI_PYTHON, lmi_workers=LMI_WORKERS,
               load_1_5_15_start=load_start)
    print("Total %.0f s; load average %.2f %.2f %.2f" % ((time.monotonic() - started,) + os.getloadavg()))
    failed = any(c.error is not None for c in cells)
    done = all(c["stock_loses_or_repeats"] and c["layer_answers_once"] for c in checks.values())
    return 0 if done and not failed else 1


if __name__ == "__main__":
    exit_with(main)
