"""The learned idle limit end to end: a NAT shorter than max idle, nothing leaving the frozen function.

    python -m lab.experiments.measure_learn.run            (make measure-learn; root, builds nothing itself)

The built layer (build/layer.zip) in the Lambda stand-in (CPython 3.12, awslambdaric), inside a NAT
namespace whose conntrack forgets a flow after NAT_TIMEOUT_S (3 s), DynamoDB Local over TLS behind
it. The layer's max idle is MAX_IDLE_S (8 s): longer than the NAT's timeout, so max idle alone does
not protect this path -- the case of a firewall or proxy shorter than the 350 s max idle is set
against. While the function is frozen between invocations no packet leaves its namespace (the lab's
"no packets" freeze: keep-alive probes dropped before conntrack sees them), the working assumption
for standard Lambda. Gaps of GAP_S (4.5 s, between the two) and one of SHORT_GAP_S (1.5 s, under
the NAT timeout), in two NAT modes:

* reset: the NAT answers a forgotten flow with a RST (NAT gateway). Gap 1 meets one reset and one
  retry; the layer learns the host's limit (0.8 x the idle that failed); every later long gap gets
  0 resets, 0 retries and one clean handshake ("learned idle"); the short gap keeps reusing.
* drop: the NAT drops it silently. Gap 1 hangs until the function's read_timeout (2 s), then
  retries; later long gaps do not hang.
* reset-off: the control, AWS_PYTHON_KEEPALIVE_LEARN=0: every long gap meets the reset.

Each row: the gap, the invocation's duration, connection errors (resets, or hangs) and retries
(lab_observe, botocore's own events), TCP connections the endpoint side accepted (Netem), the
layer's reason for each new connection (debug lines) and the EMF counts the invocation wrote
(AWS_PYTHON_KEEPALIVE_METRICS=1: they reach stdout within the invocation). tests/lab/
test_e2e_learn.py runs the same sequences and asserts on them; this module prints the table and
writes build/measure-learn.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import textwrap
from pathlib import Path

from lab import REPO
from lab.standin.function_net import CountingFunction, keepalive_env, run_gaps

NAT_TIMEOUT_S = 3
MAX_IDLE_S = 8
GAP_S = 4.5
SHORT_GAP_S = 1.5
READ_TIMEOUT_S = 2
TABLE = "lab-learn"
GAPS = {"reset": [GAP_S, GAP_S, GAP_S, SHORT_GAP_S, GAP_S], "drop": [GAP_S, GAP_S, SHORT_GAP_S]}

# botocore reads no read_timeout from the environment: the function sets a short one so that the
# silent variant's first gap hangs 2 s instead of 60 s. Both modes use it.
HANDLER = """
    import os
    import boto3
    from botocore.config import Config

    client = boto3.client("dynamodb", config=Config(read_timeout=%d, connect_timeout=2))

    def handler(event, context):
        client.put_item(TableName=os.environ["TABLE_NAME"], Item={"pk": {"S": "learn"}})
        return {"ok": True}
""" % READ_TIMEOUT_S


def function_env() -> dict:
    """The layer on, probes on (IDLE=1; INTERVAL=30 so that no probe is due right at the thaw and
    meets the NAT's reset before the request does), max idle 8 s, debug lines and metrics."""
    env = keepalive_env(idle=1, interval=30, count=3, max_idle=MAX_IDLE_S, debug=True)
    env["AWS_PYTHON_KEEPALIVE_METRICS"] = "1"
    # TLS resumption on (opt-in, settings.TLS_RESUME_BY_DEFAULT): tests/lab/test_e2e_learn.py counts
    # TlsResumed/TlsNotResumed.
    env["AWS_PYTHON_KEEPALIVE_TLS_RESUME"] = "1"
    return env


def write_task(folder) -> Path:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "probe.py").write_text(textwrap.dedent(HANDLER))
    return folder


def emf_totals(lines) -> dict:
    """EMF counts in ``lines``: {"first use": n, ..., "StaleReuses": n}."""
    totals: dict = {}
    for line in lines:
        if not (line.startswith("{") and '"_aws"' in line):
            continue
        record = json.loads(line)
        for directive in record["_aws"]["CloudWatchMetrics"]:
            for metric in directive["Metrics"]:
                name = metric["Name"]
                if name == "ConnectMs":
                    continue
                key = record["Reason"] if name == "NewConnections" else name
                totals[key] = totals.get(key, 0) + record[name]
    return totals


def row(mode: str, index: int, record) -> dict:
    """One invocation after a gap, as the table prints it."""
    hook = record.hook_lines()
    reasons = [m.group(1) for m in (re.search(r"new connection to \S+ \(([^)]+)\)", line) for line in hook) if m]
    c = record.counters
    return {
        "mode": mode, "gap": index, "gap_s": round(record.gap_s, 2), "ok": record.ok,
        "ms": round(record.duration_ms, 1), "connection_errors": c["connection_errors"],
        "retries": c["retries"], "tcp_connects": c["tcp_connects"], "reasons": reasons,
        "stale_warnings": len([line for line in hook if "stale pooled connection" in line]),
        "emf": emf_totals(record.stdout),
    }


def run_mode(net, layer_root, task, mode: str, learn: bool = True) -> list:
    """Warm-up, then the mode's gaps (frozen, no packets): one row per gap. ``learn=False``: the
    control, AWS_PYTHON_KEEPALIVE_LEARN=0 (rows labelled ``<mode>-off``)."""
    env = function_env() if learn else dict(function_env(), AWS_PYTHON_KEEPALIVE_LEARN="0")
    with net.function(task, "probe.handler", table=TABLE, python="3.12", opt=layer_root, env=env) as fn:
        records = run_gaps(CountingFunction(fn, net), net, {}, GAPS[mode], no_packets=True)
    label = mode if learn else mode + "-off"
    return [row(label, i, r) for i, r in enumerate(records[1:], 1)]


HEADER = ("NAT", "gap", "idle", "ms", "errors", "retries", "conns", "new connection (reason)", "EMF")


def cells(r) -> tuple:
    """One row's cells, as the printed table and docs/diagnostics.md show them."""
    return (r["mode"], "%d" % r["gap"], "%.1f s" % r["gap_s"], "%.1f" % r["ms"], "%d" % r["connection_errors"],
            "%d" % r["retries"], "%d" % r["tcp_connects"], ", ".join(r["reasons"]) or "- (reused)",
            " ".join("%s=%s" % kv for kv in sorted(r["emf"].items())) or "-")


def print_table(rows) -> None:
    print("%-9s %-4s %6s %9s %7s %8s %6s  %-32s %s" % HEADER)
    for r in rows:
        print("%-9s %-4s %6s %9s %7s %8s %6s  %-32s %s" % cells(r))


def view(data) -> str:
    """docs/diagnostics.md's table, rendered from build/measure-learn.json by tools/docs/render_docs.py."""
    learn = data["measure-learn"]
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(cells(r)) + " |" for r in learn["rows"]]
    return ("NAT timeout %s s, max idle %s s, read timeout %s s, stand-in CPython %s; `-off`: "
            "AWS_PYTHON_KEEPALIVE_LEARN=0:\n\n" % (learn["nat_timeout_s"], learn["max_idle_s"],
                                                   learn["read_timeout_s"], learn["python"]) + "\n".join(lines))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", default=os.path.join(os.environ.get("BUILD_DIR", "build"), "measure-learn.json"))
    parser.add_argument("--layer", default="build/layer.zip")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(REPO / "bench"))
    from rows import write_rows

    from lab.net import nat
    from lab.services.dynamodb import DynamoDBLocal
    from lab.standin.function_net import FunctionNetwork, create_table
    from lab.standin.lambda_env import extract_layer

    reason = nat.unavailable_reason()
    if reason:
        print("cannot run: " + reason, file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="measure-learn-"))
    layer_root = extract_layer(args.layer, work / "opt")
    task = write_task(work / "task")
    rows = []
    with DynamoDBLocal() as ddb:
        create_table(ddb, TABLE)
        for mode, learn in (("reset", True), ("drop", True), ("reset", False)):
            with FunctionNetwork(ddb, nat_timeout=NAT_TIMEOUT_S, mode=mode) as net:
                rows += run_mode(net, layer_root, task, mode, learn)
    print("NAT timeout %d s < max idle %d s; nothing leaves the frozen function; read_timeout %d s; "
          "CPython %s, %s" % (NAT_TIMEOUT_S, MAX_IDLE_S, READ_TIMEOUT_S, "3.12", os.uname().machine))
    print_table(rows)
    write_rows(args.json, rows, nat_timeout_s=NAT_TIMEOUT_S, max_idle_s=MAX_IDLE_S,
               read_timeout_s=READ_TIMEOUT_S, python="3.12")
    return 0


if __name__ == "__main__":
    sys.exit(main())
