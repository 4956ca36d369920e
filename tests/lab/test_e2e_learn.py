"""End-to-end: the learned idle limit behind a kernel NAT shorter than max idle (lab/experiments/measure_learn/run.py,
``make measure-learn`` prints the same runs as a table). The built layer in the stand-in (CPython
3.12, awslambdaric), NAT timeout 3 s, max idle 8 s, nothing leaving the frozen function, gaps of
4.5 s and one of 1.5 s; reset and silent-drop NATs, and learning switched off as the control. The
three run side by side, one namespace each."""

from e2e import built_layer_fixture, dynamodb_fixture, networks_fixture, side_by_side  # noqa: F401
from lab.experiments.measure_learn import run as measure_learn
from lab.standin.function_net import create_table


def test_first_gap_resets_later_gaps_replaced_short_gap_reused(tmp_path, built_layer, dynamodb, networks):
    """Reset NAT: gap 1 meets one reset and one retry (one warning, StaleReuses=1 in that
    invocation's EMF); every later 4.5 s gap: 0 resets, 0 retries, one clean handshake ("learned
    idle"); the 1.5 s gap reuses. Silent NAT: gap 1 hangs until read_timeout (2 s) and retries,
    the later long gap does not hang. Learning off: every long gap meets the reset."""
    def network(mode):
        return networks(mode, 1, measure_learn.NAT_TIMEOUT_S)[0]

    create_table(dynamodb, measure_learn.TABLE)
    task = measure_learn.write_task(tmp_path / "task")
    reset, drop, off = side_by_side(
        lambda: measure_learn.run_mode(network("reset"), built_layer, task, "reset"),
        lambda: measure_learn.run_mode(network("drop"), built_layer, task, "drop"),
        lambda: measure_learn.run_mode(network("reset"), built_layer, task, "reset", learn=False))
    measure_learn.print_table(reset + drop + off)
    assert all(r["ok"] for r in reset + drop + off)
    assert all(r["gap_s"] > measure_learn.NAT_TIMEOUT_S + 1 for r in reset + drop + off
               if r["gap_s"] > measure_learn.SHORT_GAP_S + 1)

    for first in (reset[0], drop[0]):
        assert (first["connection_errors"], first["retries"], first["tcp_connects"]) == (1, 1, 1), first
        assert first["stale_warnings"] == 1 and first["emf"].get("StaleReuses") == 1, first
    assert drop[0]["ms"] >= measure_learn.READ_TIMEOUT_S * 1000, drop[0]  # waited out read_timeout
    assert reset[0]["ms"] < 1000, reset[0]

    for later in (reset[1], reset[2], reset[4], drop[1]):
        assert (later["connection_errors"], later["retries"], later["tcp_connects"]) == (0, 0, 1), later
        # The one new connection is also counted as TLS resumed or not (issue 30's EMF metrics).
        tls = {name: count for name, count in later["emf"].items() if name in ("TlsResumed", "TlsNotResumed")}
        assert later["reasons"] == ["learned idle"] and sum(tls.values()) == 1, later
        assert {name: count for name, count in later["emf"].items() if name not in tls} == {"learned idle": 1}, later
        assert later["ms"] < 1000 and later["stale_warnings"] == 0, later
    for short in (reset[3], drop[2]):
        assert (short["connection_errors"], short["retries"], short["tcp_connects"]) == (0, 0, 0), short
        assert short["reasons"] == [] and short["emf"] == {}, short

    long_off = [r for i, r in enumerate(off) if measure_learn.GAPS["reset"][i] == measure_learn.GAP_S]
    assert all(r["connection_errors"] == 1 and r["retries"] == 1 for r in long_off), off
