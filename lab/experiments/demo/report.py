"""The demo's tables: per handler, one row per configuration and phase.

Columns: latency percentiles of the time the function measured around its put(s) (nearest rank,
lab.standin.driver.percentile), TCP connections per invocation as Netem accepted them (the real count,
handshakes included whatever their reason), resets (attempts that got no HTTP response: a reset,
or a read timeout), botocore retries, and failed invocations. Printed as Markdown so the output can
go into the README as is.
"""

from __future__ import annotations

from lab.standin.driver import percentile

PHASES = ("steady", "gaps")
HEADER = ("configuration", "phase", "calls", "p50 ms", "p95 ms", "p99 ms", "max ms",
          "new conn / inv", "resets", "retries", "failed")


def rows(runs, handler, call_ms):
    out = []
    for run in runs:
        if run.handler != handler:
            continue
        for phase in PHASES:
            records = run.phases.get(phase)
            if not records:
                continue
            ms = [v for v in (call_ms(r) for r in records) if v is not None]
            pcts = [percentile(ms, p) for p in (50, 95, 99)] + [max(ms) if ms else None]
            out.append((run.config.label, phase, len(records))
                       + tuple("%.1f" % v if v is not None else "-" for v in pcts)
                       + ("%.2f" % (sum(r.counters.get("tcp_connects", 0) for r in records) / len(records)),
                          sum(r.counters["connection_errors"] for r in records),
                          sum(r.counters["retries"] for r in records),
                          sum(1 for r in records if not r.ok)))
    return out


def markdown(table_rows, header=HEADER, first_number=2) -> str:
    """A Markdown table; columns from ``first_number`` on are numbers, right-aligned."""
    cells = [header] + [tuple(str(c) for c in row) for row in table_rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    right = lambda i: i >= first_number  # noqa: E731 - numbers right-aligned

    def line(row):
        return "| " + " | ".join(c.rjust(w) if right(i) else c.ljust(w)
                                 for i, (c, w) in enumerate(zip(row, widths))) + " |"

    sep = "|" + "|".join(("-" * (w + 1) + ":") if right(i) else ("-" * (w + 2))
                         for i, w in enumerate(widths)) + "|"
    return "\n".join([line(cells[0]), sep] + [line(r) for r in cells[1:]])


def print_tables(runs, handlers: dict, call_ms, not_run=None) -> None:
    """``not_run``: configuration label -> why it did not run, shown as its row (no numbers)."""
    for handler, what in handlers.items():
        print()
        print("app.%s (%s per invocation; ms = the function's own timing of its %s)" % (handler, what, what))
        print()
        skipped = [(label, why) + ("-",) * (len(HEADER) - 2) for label, why in (not_run or {}).items()]
        print(markdown(rows(runs, handler, call_ms) + skipped))
