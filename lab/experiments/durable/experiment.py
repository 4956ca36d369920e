"""The durable-function experiment: configurations, the run, and what each resume after a wait measured.

Per environment (CPython minor x configuration x NAT mode) one execution: ``rounds`` rounds of two
steps and a wait of ``wait_s`` seconds (longer than the scaled NAT timeout), then one last step.
The first invocation is the cold start; every later one is a *resume* after a wait, and its first
request is the first checkpoint on the pooled connection since the wait.

What a resume measures, from the function's own botocore and urllib3 log records (lab_observe, with
their times and the thread that sent them; every request in the function is the SDK's):

* first checkpoint ms: from its first attempt's "Sending http request" to its HTTP response, so a
  reset, its retry and the new connection are inside it;
* steady checkpoint ms: the median of the same invocation's later requests on the live connection;
* resets: attempts that got no HTTP response and failed fast (a RST); hangs: such attempts that
  lasted HANG_S or more (a silently dropped flow waited out to the read timeout); retries:
  botocore's own retries (standard mode logs each).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from lab.experiments.demo.shared import Config, side_by_side
from lab.standin.function_net import AWS_SWITCH_ENV, FunctionNetwork, keepalive_env
from lab.standin.lambda_env import extract_layer
from lab.services.durable import invoke_function

REPO = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
FUNCTION = HERE / "function"
HANG_S = 2.0  # a failed attempt this long waited for a read timeout (a reset fails within an RTT)
SDK_READ_TIMEOUT_S = 50  # LambdaClient.initialize_client's read_timeout (not scaled: the SDK's own)


# The demos' Config (lab.experiments.demo.shared); ``no_packets``: nothing leaves the frozen environment during a wait.
CONFIGS = {c.name: c for c in [
    Config("none", "no layer", layer=False, on=False),
    Config("aws", "no layer, BOTOCORE_TCP_KEEPALIVE=true", layer=False, on=False, env=AWS_SWITCH_ENV),
    Config("on", "layer on", layer=True, on=True),
    Config("on-user", "layer on, boto3_client=", layer=True, on=True),
    Config("on-nopkt", "layer on, nothing leaves the frozen env", layer=True, on=True, no_packets=True),
]}
# The handler each configuration runs (function/app.py); the rest run ``app.handler``, the SDK's client.
HANDLERS = {"on-user": "app.handler_user_client"}


@dataclass
class Run:
    """One environment's execution: its invocations as the stand-in recorded them, the execution's
    final state from the service, and the User-Agents its checkpoint requests carried."""

    python: str
    config: Config
    mode: str
    records: list = field(default_factory=list)
    execution: dict = field(default_factory=dict)
    error: Optional[BaseException] = None
    fn: object = None

    @property
    def key(self) -> str:
        return "%s/%s/%s" % (self.python, self.config.name, self.mode)


# --- the function's task folder ------------------------------------------------------------------
def task_folder(deps: Path, dest: Path) -> Path:
    """LAMBDA_TASK_ROOT: function/app.py beside the SDK and its boto3 (``deps``, installed from
    function-requirements.txt with ``pip install --target``), linked rather than copied. The task
    root comes first on sys.path, before the layer, as on Lambda: with the layer on, the layer's
    hook patches this bundled botocore."""
    if not (deps / "aws_durable_execution_sdk_python").is_dir():
        raise RuntimeError("%s has no aws_durable_execution_sdk_python: run `make demo-durable` "
                           "(it installs %s there)" % (deps, "lab/experiments/durable/function-requirements.txt"))
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for entry in deps.resolve().iterdir():
        if entry.name not in ("bin", "__pycache__") and not entry.name.startswith("."):
            (dest / entry.name).symlink_to(entry)
    shutil.copy(FUNCTION / "app.py", dest / "app.py")
    return dest


def sdk_version(deps: Path) -> str:
    for entry in deps.iterdir():
        if entry.name.startswith("aws_durable_execution_sdk_python-") and entry.name.endswith(".dist-info"):
            return entry.name[len("aws_durable_execution_sdk_python-"):-len(".dist-info")]
    return "?"


# --- one environment -----------------------------------------------------------------------------
def function_env(service, network: FunctionNetwork, config: Config, timers: dict) -> dict:
    """The function's variables: the SDK's client finds the service through AWS_ENDPOINT_URL_LAMBDA
    (Netem's address seen from inside the namespace) and trusts the lab CA in a real-size bundle."""
    from lab.standin.trust_store import sdk_bundle_with

    return {"AWS_ENDPOINT_URL_LAMBDA": network.endpoint_url,
            "AWS_CA_BUNDLE": sdk_bundle_with(service.ca_bundle_path),
            **keepalive_env(on=config.on, **timers, debug=False), **config.env}


def run_one(run: Run, network: FunctionNetwork, offset: float, stop: threading.Event, service, task: Path,
            opt: Optional[Path], timers: dict, args) -> None:
    """Start the environment, register it with the Invoke endpoint, start the execution (after
    ``offset`` of the wait: the executions' schedules interleave), wait for it to finish. In
    ``no_packets`` mode the namespace's veth drops everything between invocations."""
    from lab.standin.lambda_env import LambdaFunction

    name = "lab-%s-%s-%s" % (run.python.replace(".", ""), run.config.name, run.mode)
    try:
        with LambdaFunction(task, HANDLERS.get(run.config.name, "app.handler"), python=run.python,
                            opt=opt if run.config.layer else None,
                            env=function_env(service, network, run.config, timers),
                            prefix=network.nat.command([]), api_sock_factory=network.nat.socket,
                            memory_mb=args.memory_mb or None, init_timeout=120.0) as fn:
            run.fn = fn
            fn.records = run.records

            def invoke(payload: bytes):
                if network.nat.frozen:
                    network.nat.thaw()
                try:
                    return invoke_function(fn, payload, args.invocation_timeout)
                finally:
                    if run.config.no_packets:
                        network.nat.freeze()

            service.invoke.register(name, invoke)
            time.sleep(offset * args.wait)
            if stop.is_set():
                return
            arn = service.start_execution(name, {"rounds": args.rounds, "wait_s": args.wait})
            budget = args.rounds * (args.wait + 2 * SDK_READ_TIMEOUT_S + 30) + 120
            run.execution = service.wait_done(arn, budget)
            service.invoke.unregister(name)
    except BaseException as error:  # reported by the caller
        run.error = error
    finally:
        if network.nat.frozen:
            network.nat.thaw()


def run_all(args, service, timers: dict, deps: Path, workdir: Path) -> list:
    """Every CPython minor x configuration x NAT mode side by side, in threads (demo's side_by_side),
    starts staggered over the wait so that their invocations interleave rather than collide on this
    2-core machine."""
    runs = [Run(p, CONFIGS[c], m) for p in args.pythons for m in args.modes for c in args.configs]
    task = task_folder(deps, workdir / "task")
    opt = extract_layer(args.zip, workdir / "opt") if any(r.config.layer for r in runs) else None
    networks: list = []
    try:
        for run in runs:
            networks.append(FunctionNetwork(service, nat_timeout=args.nat_timeout, mode=run.mode,
                                            rtt=args.rtt_ms / 1000.0).start())
    except BaseException:
        for network in networks:
            network.stop()
        raise
    side_by_side(runs, networks, run_one, lambda run: "durable-" + run.key,
                 extra=(service, task, opt, timers, args))
    return runs


# --- what a resume measured ------------------------------------------------------------------------
def requests(events: list) -> list:
    """The invocation's HTTP requests in order, each ``{"attempts": [(t, failed, seconds)], "ms": ..,
    "thread": ..}`` from its lab_observe events. An attempt ends with an HTTP response, or with the
    next attempt, which is then its retry (it got no response: a reset or a timeout); an attempt
    after a logged retry (e.g. of a 5xx answer) also belongs to the same request."""
    out: list = []
    current = None
    open_attempt = None
    retry_pending = False
    for event in sorted(events, key=lambda e: e["t"]):
        kind = event["kind"]
        if kind == "attempt":
            if open_attempt is not None:
                current["attempts"].append((open_attempt, True, event["t"] - open_attempt))
            elif current is None or not retry_pending:
                current = {"start": event["t"], "attempts": [], "ms": None, "thread": event.get("thread")}
                out.append(current)
            open_attempt = event["t"]
            retry_pending = False
        elif kind == "http_response" and open_attempt is not None:
            current["attempts"].append((open_attempt, False, event["t"] - open_attempt))
            current["ms"] = (event["t"] - current["start"]) * 1000.0
            open_attempt = None
        elif kind == "retry":
            retry_pending = True
    return out


def resume(record, previous) -> dict:
    """One resume (an invocation after a wait): its gap, first and steady checkpoint, failures."""
    reqs = requests(record.events)
    failed = [(t, s) for r in reqs for t, bad, s in r["attempts"] if bad]
    steady = [r["ms"] for r in reqs[1:] if r["ms"] is not None and len(r["attempts"]) == 1]
    ended = previous.timings.completed_ns
    return {
        "gap_s": None if ended is None else (record.timings.queued_ns - ended) / 1e9,
        "outcome": record.outcome.kind, "duration_ms": record.duration_ms,
        "first_ms": reqs[0]["ms"] if reqs else None,
        "steady_ms": statistics.median(steady) if steady else None,
        "resets": sum(1 for _, s in failed if s < HANG_S),
        "hangs": sum(1 for _, s in failed if s >= HANG_S),
        "retries": record.counters["retries"],
        "new_connections": record.counters["new_connections"] + record.counters["dropped_replaced"],
        "requests": len(reqs),
        "threads": sorted({r["thread"] for r in reqs if r["thread"]}),
        "ok": record.ok,
    }


def resumes(run: Run) -> list:
    return [resume(record, previous) for previous, record in zip(run.records, run.records[1:])]


def settings(run: Run) -> dict:
    """What the last invocation reported about its checkpoint client (function/app.py)."""
    result = run.execution.get("Result")
    try:
        return json.loads(result) if result else {}
    except ValueError:
        return {}


def default_deps() -> Path:
    return Path(os.environ.get("AWS_KEEPALIVE_DURABLE_TASK", REPO / ".venv" / "durable-task"))
