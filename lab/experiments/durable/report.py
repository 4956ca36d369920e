"""The table and the JSON of ``make demo-durable``: one row per CPython minor x configuration x NAT mode.

Columns: resumes (invocations after a wait); p50 of the first checkpoint after a wait and of a steady
checkpoint (the same invocation's later requests on the live connection), and their ratio (the goal:
<= 2 with the layer); resets, retries and hangs summed over the resumes; new connections opened in
them; failed (invocations that did not answer, plus 1 if the execution did not succeed); the SDK's
version; and what the checkpoint client ran with (read/connect timeout, user_agent_extra, keep-alive
of its pooled socket as the kernel reports it), so a reader sees that the SDK's settings survived.
"""

from __future__ import annotations

from lab.experiments.demo.report import markdown as _markdown
from lab.standin.driver import percentile
from lab.experiments.durable.experiment import resumes, settings

HEADER = ("python", "configuration", "NAT", "resumes", "first ckpt p50 ms", "steady p50 ms", "ratio",
          "resets", "retries", "hangs", "new conn", "failed", "client (read/connect s, keep-alive idle)")


def _socket_keepalive(found: dict) -> str:
    sockets = found.get("sockets") or []
    if not sockets:
        return "no socket"
    if all(s.get("SO_KEEPALIVE") for s in sockets):
        return "idle %ss" % "/".join(sorted({str(s.get("TCP_KEEPIDLE")) for s in sockets}))
    return "off"


def rows(runs, sdk: str) -> list:
    out = []
    for run in runs:
        measured = resumes(run)
        first = [m["first_ms"] for m in measured if m["first_ms"] is not None]
        steady = [m["steady_ms"] for m in measured if m["steady_ms"] is not None]
        first_p50, steady_p50 = percentile(first, 50), percentile(steady, 50)
        found = settings(run)
        out.append({
            "python": run.python, "configuration": run.config.label, "config": run.config.name,
            "nat_mode": run.mode, "resumes": len(measured),
            "first_checkpoint_p50_ms": first_p50, "steady_checkpoint_p50_ms": steady_p50,
            "first_over_steady": (first_p50 / steady_p50) if first_p50 and steady_p50 else None,
            "first_checkpoint_max_ms": max(first) if first else None,
            "resets": sum(m["resets"] for m in measured), "retries": sum(m["retries"] for m in measured),
            "hangs": sum(m["hangs"] for m in measured),
            "new_connections": sum(m["new_connections"] for m in measured),
            "failed": sum(1 for r in run.records if not r.ok)
            + (0 if run.execution.get("Status") == "SUCCEEDED" else 1),
            "execution_status": run.execution.get("Status"),
            "error": None if run.error is None else repr(run.error),
            "gap_s_min": min((m["gap_s"] for m in measured if m["gap_s"] is not None), default=None),
            "outcomes": [r.outcome.kind for r in run.records],
            "checkpoint_threads": sorted({t for m in measured for t in m["threads"]}),
            "client": {k: found.get(k) for k in ("read_timeout", "connect_timeout", "user_agent_extra",
                                                 "tcp_keepalive", "sockets")},
            "sdk_version": sdk,
            "per_resume": measured,
        })
    return out


def markdown(table_rows) -> str:
    def ms(value):
        return "-" if value is None else "%.1f" % value

    return _markdown([(r["python"], r["configuration"], "reset" if r["nat_mode"] == "reset" else "silent",
                       r["resumes"], ms(r["first_checkpoint_p50_ms"]), ms(r["steady_checkpoint_p50_ms"]),
                       "-" if r["first_over_steady"] is None else "%.2f" % r["first_over_steady"],
                       r["resets"], r["retries"], r["hangs"], r["new_connections"], r["failed"],
                       "%s/%s, %s" % (r["client"]["read_timeout"], r["client"]["connect_timeout"],
                                      _socket_keepalive(r["client"])))
                      for r in table_rows], header=HEADER, first_number=3)


def summary(table_rows) -> str:
    """The table in three sentences, computed from its rows (docs/durable.md shows it under the table)."""
    on = [r for r in table_rows if r["config"].startswith("on")]
    off = [r for r in table_rows if not r["config"].startswith("on")]
    kept = [r["first_over_steady"] for r in on if not r["new_connections"] and r["first_over_steady"]]
    replaced = [r["first_over_steady"] for r in on if r["new_connections"] and r["first_over_steady"]]
    reset = [r["first_checkpoint_p50_ms"] for r in off if r["nat_mode"] == "reset" and r["first_checkpoint_p50_ms"]]
    silent = [r["first_checkpoint_p50_ms"] for r in off if r["nat_mode"] == "drop" and r["first_checkpoint_p50_ms"]]

    def span(values, fmt):
        return (fmt % min(values)) + ("" if fmt % min(values) == fmt % max(values) else "–" + fmt % max(values))

    lines = ["With the layer: %d resumes, %d resets, %d retries, %d hangs, %d failed invocations."
             % tuple(sum(r[k] for r in on) for k in ("resumes", "resets", "retries", "hangs", "failed"))]
    if kept:
        lines.append("Connection kept through the wait: first checkpoint %sx a steady one (p50s)." % span(kept, "%.2f"))
    if replaced:
        lines.append("Connection replaced before the first checkpoint (max idle, nothing left the frozen env): "
                     "%sx a steady one." % span(replaced, "%.2f"))
    lines.append("Without the layer: %d resumes, %d resets, %d retries, %d hangs; first checkpoint p50 %s ms behind "
                 "the resetting NAT, %s ms behind the silent one."
                 % (tuple(sum(r[k] for r in off) for k in ("resumes", "resets", "retries", "hangs"))
                    + (span(reset, "%.0f") if reset else "-", span(silent, "%.0f") if silent else "-")))
    return " ".join(lines)


def view(data) -> str:
    """docs/durable.md's table, rendered from the JSON (docs/data/demo-durable.json) by make docs."""
    run = data["demo-durable"]
    return ("aws-durable-execution-sdk-python %s bundled, %s, RTT %.1f ms, NAT timeout %d s, waits of %d s, "
            "%d waits per execution:\n\n"
            % (run["sdk_version"], "%d MB" % run["memory_mb"] if run["memory_mb"] else "full CPU",
               run["rtt_ms"], run["nat_timeout_s"], run["wait_s"], run["rounds"])
            + markdown(run["rows"]) + "\n\n" + summary(run["rows"]))
