"""How an async (aiobotocore) Lambda function keeps its connections across invocations, measured.

    sudo .venv/test-3.12/bin/python -m lab.experiments.async_patterns.run [--invocations 10] [--rtt-ms 4]
    (make measure-async)

Three patterns people write, each run in the Lambda stand-in (lab/standin/lambda_env.py, CPython 3.12,
frozen between invocations) in its own network namespace with its own Netem (RTT 4 ms) in front of
DynamoDB Local over TLS. No layer: this is about the code pattern, not the layer.

* ``per-invocation``  ``asyncio.run(main())`` per invocation, the client opened inside it (the
  aiobotocore README's shape). The loop, the connector and its connections die with each run.
* ``persistent-loop`` examples/async_put_item/app.py: a loop made at import, the client entered at
  import, ``LOOP.run_until_complete`` per invocation. The connector outlives the invocation.
* ``module-client+asyncio.run`` the client entered at import on one loop, the handler calling
  ``asyncio.run``: aiohttp's session belongs to the import-time loop, which ``asyncio.run`` never
  uses; the invocations fail.

New connections are counted where they cannot be missed: Netem's accepted connections (each is a
TCP + TLS handshake across the emulated RTT), read before and after every invocation. aiohttp logs
no "new connection" line, so lab_observe's counter (urllib3's) would say 0 whatever happened.

The function's task folder (LAMBDA_TASK_ROOT) is made once per lock and minor under
``.cache/async-task-<minor>-<sha>``: lab/async-requirements.txt installed with ``uv pip install
--target`` (the function bundles aiobotocore and the botocore it pins, as a real one must), plus
the pattern modules written next to it.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import statistics
import sys
import textwrap
from pathlib import Path
from typing import Optional

from lab import REPO
from lab.standin.runtime_prefix import base_python, install_lock_once

LOCK_FILE = REPO / "lab" / "async-requirements.txt"
EXAMPLE = REPO / "examples" / "async_put_item" / "app.py"
TABLE = "lab-async"

# The patterns other than the example itself (which is copied in as app.py / handler app.handler).
PER_INVOCATION = """
    import asyncio, os, uuid
    from aiobotocore.session import get_session

    async def _put():
        async with get_session().create_client("dynamodb") as client:
            await client.put_item(TableName=os.environ["TABLE_NAME"], Item={"pk": {"S": str(uuid.uuid4())}})

    def handler(event, context):
        asyncio.run(_put())
        return {"ok": True}
"""

MODULE_CLIENT_ASYNCIO_RUN = """
    import asyncio, contextlib, os, uuid
    from aiobotocore.session import get_session

    _stack = contextlib.AsyncExitStack()
    client = asyncio.new_event_loop().run_until_complete(
        _stack.enter_async_context(get_session().create_client("dynamodb")))

    async def _put():
        await client.put_item(TableName=os.environ["TABLE_NAME"], Item={"pk": {"S": str(uuid.uuid4())}})

    def handler(event, context):
        asyncio.run(_put())
        return {"ok": True}
"""

PATTERNS = (
    ("per-invocation", "per_invocation.handler"),
    ("persistent-loop", "app.handler"),
    ("module-client+asyncio.run", "module_client_asyncio_run.handler"),
)


def async_task(minor: str = "3.12") -> Path:
    """The task folder holding aiobotocore (from the lock) and every pattern's module; the install
    is made on first use and reused while the lock is unchanged (runtime_prefix.install_lock_once)."""
    digest = hashlib.sha256(LOCK_FILE.read_bytes()).hexdigest()
    task = REPO / ".cache" / ("async-task-%s-%s" % (minor, digest[:12]))
    install_lock_once(LOCK_FILE, task, base_python(minor))
    # The modules are tiny and always rewritten, so an edit of the example is never stale.
    shutil.copyfile(EXAMPLE, task / "app.py")
    (task / "per_invocation.py").write_text(textwrap.dedent(PER_INVOCATION))
    (task / "module_client_asyncio_run.py").write_text(textwrap.dedent(MODULE_CLIENT_ASYNCIO_RUN))
    return task


def run_counted(fn, network, n: int, gap_s: float) -> list[dict]:
    """Invoke ``fn`` n times, ``gap_s`` apart (frozen in between: function_net.run_gaps); per
    invocation: ok, error, duration, Netem's newly accepted connections, and the lab_observe
    counters (attempts, retries)."""
    from lab.standin.function_net import CountingFunction, run_gaps

    rows = []
    for record in run_gaps(CountingFunction(fn, network), network, {}, [gap_s] * (n - 1)):
        body = record.outcome.body
        error = None if record.ok else str(body.get("errorMessage", body) if isinstance(body, dict) else body)
        rows.append({"ok": record.ok, "error": error, "ms": record.duration_ms,
                     "new_connections": record.counters["tcp_connects"],
                     "attempts": record.counters["attempts"], "retries": record.counters["retries"]})
    return rows


def short_error(message: str) -> str:
    """An error message without its ``<object reprs>``: aiohttp's loop errors nest several."""
    previous = None
    while previous != message:
        previous, message = message, re.sub(r"<[^<>]*>", "", message)
    return " ".join(message.split())


def summarize(name: str, rows: list[dict]) -> dict:
    """One table row: invocations ok, new connections per warm invocation (all but the first), p50."""
    warm = rows[1:]
    durations = [r["ms"] for r in rows if r["ok"] and r["ms"] is not None]
    errors = [r["error"] for r in rows if not r["ok"]]
    return {"pattern": name, "invocations": len(rows), "ok": sum(r["ok"] for r in rows),
            "new_per_warm_invocation": (sum(r["new_connections"] for r in warm) / len(warm)) if warm else None,
            "p50_ms": statistics.median(durations) if durations else None,
            "first_error": short_error(errors[0]) if errors else ""}


def measure(n: int, rtt_ms: float, gap_s: float, minor: str = "3.12") -> list[dict]:
    from lab.services.dynamodb import DynamoDBLocal
    from lab.standin.function_net import FunctionNetwork, create_table

    task = async_task(minor)
    results = []
    with DynamoDBLocal() as ddb:
        create_table(ddb, TABLE)
        for name, handler in PATTERNS:
            # A NAT timeout far beyond the gaps: only the pattern decides what is reused.
            with FunctionNetwork(ddb, nat_timeout=600, rtt=rtt_ms / 1000.0) as net:
                with net.function(task, handler, table=TABLE, python=minor) as fn:
                    results.append(summarize(name, run_counted(fn, net, n, gap_s)))
    return results


def format_table(results: list[dict]) -> str:
    lines = ["%-27s %5s %5s %18s %8s  %s" % ("pattern", "runs", "ok", "new conn/warm inv", "p50 ms", "error"),
             "-" * 100]
    for r in results:
        new = "-" if r["new_per_warm_invocation"] is None else "%.2f" % r["new_per_warm_invocation"]
        p50 = "-" if r["p50_ms"] is None else "%.1f" % r["p50_ms"]
        lines.append("%-27s %5d %5d %18s %8s  %s" % (r["pattern"], r["invocations"], r["ok"], new, p50,
                                                     r["first_error"][-75:]))
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--invocations", type=int, default=10)
    p.add_argument("--rtt-ms", type=float, default=4.0)
    p.add_argument("--gap", type=float, default=0.5, help="seconds frozen between invocations")
    p.add_argument("--python", default="3.12")
    args = p.parse_args(argv)
    from lab.net import nat

    reason = nat.unavailable_reason()
    if reason:
        print("cannot measure here: " + reason, file=sys.stderr)
        return 2
    results = measure(args.invocations, args.rtt_ms, args.gap, args.python)
    print("async patterns: %d invocations each, %.1f s frozen between, RTT %.0f ms, CPython %s, no layer"
          % (args.invocations, args.gap, args.rtt_ms, args.python))
    print(format_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
