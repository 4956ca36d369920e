"""lab/experiments/soak/report.py: the soak's figures from raw invocation data."""

from lab.experiments.soak.report import ROW_FIELDS, build_report, summarize, table_lines

RESTART = {"kind": "tls", "t": 100.0, "back": 100.2}


def put(key, t, *, ms=10.0, retries=0, n=1, error=None):
    return {"key": key, "t": t, "end": t + ms / 1000.0, "ms": ms, "retries": retries, "n": n,
            "error": error}


def invocation(puts, *, rss_kb=10000, fds=20, ok=True, connects=1):
    result = {"puts": puts, "discards": 0, "process": {"rss_kb": rss_kb, "fds": fds},
              "bookkeeping": {"pooled": 2, "stamped": 2, "checked_out": 0}}
    return {"configuration": "layer-on", "round": 0, "ok": ok, "result": result if ok else None,
            "counters": {"connection_errors": 0, "new_connections": 0}, "tcp_connects": connects}


def test_retry_within_a_second_after_a_restart_is_allowed():
    """A retry on a put starting 0.8 s after a restart came back counts in retries only."""
    invs = [invocation([put("a", 101.0, retries=1), put("b", 150.0, retries=2)])]
    row, _ = summarize("layer-on", invs, invocation([]), [RESTART], {"a": 1, "b": 1})
    assert (row["retries"], row["retries_outside_restarts"]) == (3, 2)


def test_duplicates_lost_items_and_hangs():
    """n == 2 is a duplicate, an acknowledged key missing from the audit is lost, > 1 s a hang."""
    invs = [invocation([put("a", 150.0, n=2), put("b", 151.0), put("c", 152.0, ms=1500.0)])]
    row, details = summarize("layer-on", invs, invocation([]), [RESTART], {"a": 2, "c": 1})
    assert (row["duplicated_items"], row["lost_items"], row["hangs"]) == (1, 1, 1)
    assert details["duplicated_outside_restarts"] == 1


def test_duplicate_found_only_by_the_audit_counts():
    """An item doubled after its read-back (seen only at the audit) is still a duplicate."""
    invs = [invocation([put("a", 150.0)])]
    row, _ = summarize("layer-on", invs, invocation([]), [], {"a": 3})
    assert row["duplicated_items"] == 1


def test_failed_puts_and_failed_invocations():
    """A put with an error and an invocation that failed as a whole both count as failed."""
    invs = [invocation([put("a", 150.0, error="ReadTimeoutError: ...")]), invocation([], ok=False)]
    row, _ = summarize("layer-on", invs, invocation([]), [], {})
    assert (row["failed_puts"], row["lost_items"], row["invocations"]) == (2, 0, 2)


def test_rss_and_fd_growth_from_warm_up_to_last_invocation():
    """Growth is measured from the warm-up invocation to the last one."""
    invs = [invocation([], rss_kb=10300, fds=25), invocation([], rss_kb=10500, fds=21)]
    row, details = summarize("layer-on", invs, invocation([], rss_kb=10000, fds=20), [], {})
    assert (row["rss_growth_pct"], row["fd_growth"], details["fd_max"]) == (5.0, 1, 25)


def test_report_rows_have_exactly_the_issues_fields():
    """build/soak.json rows carry exactly the fields issue 10 names, one row per configuration."""
    warm = [dict(invocation([]), configuration=name) for name in ("no-layer", "layer-on")]
    raw = {"warm_up": warm, "invocations": [dict(invocation([put("a", 1.0)]), configuration="no-layer")],
           "restarts": [RESTART], "audit": {"no-layer": {"a": 1}}, "rounds": [], "seed": 1,
           "total_s": 10.0}
    report = build_report(raw)
    assert [tuple(row) for row in report["rows"]] == [ROW_FIELDS, ROW_FIELDS]
    assert [row["configuration"] for row in report["rows"]] == ["no-layer", "layer-on"]
    lines = table_lines(report)
    assert len(lines) == 4 and lines[2].startswith("| no-layer | 1 | 1 | 0 |")


def test_resets_not_reported_for_the_aio_variant():
    """aiohttp logs no responses for lab_observe to count: resets are n/a there, not 'every attempt'."""
    aio = dict(invocation([put("a", 150.0)]), workload="aio")
    aio["counters"] = {"connection_errors": 7, "new_connections": 0}
    _, details = summarize("layer-on-aio", [aio], invocation([]), [], {"a": 1})
    assert details["resets"] is None
