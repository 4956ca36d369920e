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


# JSON keys of the same columns (build/demo.json; docs/data/demo.json once make docs took it).
KEYS = ("configuration", "phase", "calls", "p50_ms", "p95_ms", "p99_ms", "max_ms", "new_conn_per_inv",
        "resets", "retries", "failed")


def json_rows(runs, handlers, call_ms):
    """The tables' rows as dicts, numbers as numbers (``None`` where the table shows ``-``)."""
    out = []
    for handler in handlers:
        for row in rows(runs, handler, call_ms):
            record = dict(zip(KEYS, row), handler=handler)
            for key in KEYS[3:8]:
                record[key] = None if record[key] == "-" else float(record[key])
            out.append(record)
    return out


WHAT = {"handler": "1 put", "handler_ten": "10 puts"}


def view(data, handler="handler") -> str:
    """docs/demo.md's table (app.handler), rendered from the JSON by tools/docs/render_docs.py (make docs)."""
    demo = data["demo"]
    table_rows = [tuple(row[key] for key in KEYS) for row in demo["rows"] if row["handler"] == handler]
    table_rows = [row[:3] + tuple("-" if v is None else "%.1f" % v for v in row[3:7]) + ("%.2f" % row[7],) + row[8:]
                  for row in table_rows]
    return ("app.%s (%s per invocation; ms = the function's own timing of its %s), %s, RTT %.1f ms, NAT "
            "timeout %d s, gaps of %.1f s, stand-in CPython %s, no layer = botocore %s:\n\n"
            % (handler, WHAT[handler], WHAT[handler],
               "%d MB" % demo["memory_mb"] if demo["memory_mb"] else "full CPU", demo["rtt_ms"],
               demo["nat_timeout_s"], demo["gap_s"], demo["stand_in_python"], demo["runtime_botocore"])
            + markdown(table_rows))


def view_ten(data) -> str:
    """docs/lab.md's table: the same run's app.handler_ten."""
    return view(data, "handler_ten")


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
