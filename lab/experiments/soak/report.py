"""The soak's figures per configuration, from the raw data lab.experiments.soak.run collected.

``build_report(raw)`` -> ``{"rows": [...], "details": {...}, "run": {...}}``.  ``rows`` holds exactly
the fields the issue names (build/soak.json); ``details`` the rest of the table (resets, new
connections per invocation, pool discards, the layer's bookkeeping, RSS and fds at start and end).

Definitions:

* failed put: the UpdateItem or its read-back raised (after botocore's own retries), or the whole
  invocation failed;
* lost item: a put the function saw succeed whose item the final audit does not find;
* duplicated item: an item whose counter is above 1 (read back right after the put, or at the
  audit): a request that reached the table twice.  ``duplicated_outside_restarts`` leaves out those
  near a restart, where a request can legitimately be applied and its answer lost;
* retries: botocore's RetryAttempts of the UpdateItem and the GetItem; "near a restart" when a
  restart ended at most ``NEAR_RESTART_S`` before the put started, or during the put;
* hang: a put (UpdateItem) that took more than ``HANG_MS``;
* resets: attempts that got no HTTP response (reset, closed, timed out; lab_observe's
  connection_errors); None for the aiobotocore variant, whose responses urllib3 does not log;
* RSS and fds: read by the function itself after each invocation; growth from the end of the
  warm-up invocation (64 puts over 32 threads: the pool at its largest) to the last invocation.
"""

from __future__ import annotations

NEAR_RESTART_S = 1.0
HANG_MS = 1000.0
ROW_FIELDS = ("configuration", "invocations", "puts", "failed_puts", "lost_items", "duplicated_items",
              "retries", "retries_outside_restarts", "hangs", "rss_growth_pct", "fd_growth")


def near_restart(put: dict, restarts: list) -> bool:
    return any(put["t"] - NEAR_RESTART_S <= r["back"] and r["t"] <= put["end"] for r in restarts)


def summarize(name: str, invocations: list, warm_up: dict, restarts: list, audited: dict) -> tuple:
    """(row, details) for one configuration."""
    puts = failed = retries = retries_outside = hangs = 0
    duplicated = set()
    duplicated_outside = set()
    acknowledged = []
    resets = new_connections = tcp_connects = discards = 0
    for inv in invocations:
        counters = inv["counters"]
        resets += counters.get("connection_errors") or 0
        new_connections += counters.get("new_connections") or 0
        tcp_connects += inv.get("tcp_connects") or 0
        if not inv["ok"]:
            failed += 1  # counted as one failed put at least: its puts are unknown
            continue
        result = inv["result"]
        discards += result["discards"]
        for put in result["puts"]:
            puts += 1
            near = near_restart(put, restarts)
            retries += put["retries"]
            if not near:
                retries_outside += put["retries"]
            if put["error"]:
                failed += 1
                continue
            acknowledged.append(put["key"])
            if put["ms"] > HANG_MS:
                hangs += 1
            if put["n"] is not None and put["n"] > 1:
                duplicated.add(put["key"])
                if not near:
                    duplicated_outside.add(put["key"])
    for key, count in audited.items():
        if count > 1 and key not in duplicated:
            duplicated.add(key)  # doubled later: cannot be placed in time, counted outside
            duplicated_outside.add(key)
    lost = sum(1 for key in acknowledged if audited.get(key, 0) == 0)
    ok = [inv for inv in invocations if inv["ok"]]
    start = warm_up["result"]["process"] if warm_up and warm_up.get("ok") else None
    end = ok[-1]["result"]["process"] if ok else None
    rss_growth = fd_growth = None
    if start and end:
        rss_growth = round(100.0 * (end["rss_kb"] - start["rss_kb"]) / start["rss_kb"], 2)
        fd_growth = end["fds"] - start["fds"]
    row = {"configuration": name, "invocations": len(invocations), "puts": puts, "failed_puts": failed,
           "lost_items": lost, "duplicated_items": len(duplicated), "retries": retries,
           "retries_outside_restarts": retries_outside, "hangs": hangs,
           "rss_growth_pct": rss_growth, "fd_growth": fd_growth}
    n = max(1, len(invocations))
    # lab_observe reads urllib3's log for HTTP responses; aiohttp writes none, so an aio
    # invocation's "attempts without a response" would count every attempt.
    if any(inv.get("workload") == "aio" for inv in invocations):
        resets = None
    details = {"duplicated_outside_restarts": len(duplicated_outside), "resets": resets,
               "new_connections_per_invocation": round(new_connections / n, 2),
               "tcp_connects_per_invocation": round(tcp_connects / n, 2), "pool_discards": discards,
               "rss_kb": [start and start["rss_kb"], end and end["rss_kb"]],
               "fds": [start and start["fds"], end and end["fds"]],
               "fd_max": max((inv["result"]["process"]["fds"] for inv in ok), default=None),
               "bookkeeping_end": ok[-1]["result"]["bookkeeping"] if ok else None,
               "bookkeeping_max_stamped": max(
                   (inv["result"]["bookkeeping"]["stamped"] for inv in ok), default=None)}
    return row, details


def build_report(raw: dict) -> dict:
    names = [inv["configuration"] for inv in raw["warm_up"]]
    rows, details = [], {}
    for name in names:
        invocations = [inv for inv in raw["invocations"] if inv["configuration"] == name]
        warm_up = next(inv for inv in raw["warm_up"] if inv["configuration"] == name)
        audited = raw.get("audit", {}).get(name, {})
        row, detail = summarize(name, invocations, warm_up, raw["restarts"], audited)
        rows.append(row)
        details[name] = detail
    run = {key: raw.get(key) for key in ("seed", "duration_s", "nat_timeout_s", "endpoint_idle_s",
                                         "timers", "total_s", "memory_mb")}
    run["restarts"] = [r["kind"] for r in raw["restarts"]]
    run["rounds"] = len(raw.get("rounds", []))
    run["drop_mode_rounds"] = sum(1 for r in raw.get("rounds", []) if r["nat_mode"] == "drop")
    return {"rows": rows, "details": details, "run": run}


TABLE_COLUMNS = [
    ("configuration", "configuration", "%s"), ("invocations", "inv", "%d"), ("puts", "puts", "%d"),
    ("failed_puts", "failed", "%d"), ("lost_items", "lost", "%d"), ("duplicated_items", "dup", "%d"),
    ("retries", "retries", "%d"), ("retries_outside_restarts", "outside restarts", "%d"),
    ("hangs", "hangs>1s", "%d"), ("resets", "resets", "%d"),
    ("tcp_connects_per_invocation", "new conn/inv", "%.2f"), ("pool_discards", "discards", "%d"),
    ("rss_growth_pct", "RSS %", "%+.1f"), ("fd_growth", "fds", "%+d"),
    ("bookkeeping_max_stamped", "tracked max", "%s"),
]


def table_lines(report: dict) -> list:
    """The table as Markdown lines (printed by make soak, pasted into docs)."""
    lines = ["| " + " | ".join(title for _, title, _ in TABLE_COLUMNS) + " |",
             "|" + "|".join("---" for _ in TABLE_COLUMNS) + "|"]
    for row in report["rows"]:
        merged = dict(row, **report["details"][row["configuration"]])
        cells = []
        for key, _, fmt in TABLE_COLUMNS:
            value = merged.get(key)
            cells.append("n/a" if value is None else fmt % value)
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def view(data) -> str:
    """docs/soak.md's table, rendered from build/soak.json by tools/docs/render_docs.py (make docs)."""
    soak = data["soak"]
    run = soak["run"]
    return ("Seed %s, %s s of rounds (%.0f s wall): %s rounds, %s of them in drop mode; restarts: %s; %s; "
            "no layer = botocore %s:\n\n%s" % (
                run["seed"], run["duration_s"], run["total_s"] or 0, run["rounds"], run["drop_mode_rounds"],
                ", ".join(run["restarts"]) or "none",
                "%d MB" % run["memory_mb"] if run.get("memory_mb") else "full CPU", soak["runtime_botocore"],
                "\n".join(table_lines(soak))))


def print_table(report: dict) -> None:
    run = report["run"]
    print("Soak: seed %s, %s rounds (%s in drop mode) in %.0f s, restarts: %s; memory size %s" % (
        run["seed"], run["rounds"], run["drop_mode_rounds"], run["total_s"] or 0,
        ", ".join(run["restarts"]) or "none",
        "%d MB" % run["memory_mb"] if run.get("memory_mb") else "- (full CPU)"))
    for line in table_lines(report):
        print(line)
