"""lab/experiments/demo/lmi.py, shortened (one round): Lambda Managed Instances' never-frozen workers behind the
kernel NAT in reset and silent mode, some idle past the NAT timeout while others work. With the layer
on, no reset, retry or hang and a keep-alive timer in every worker; without it, the idle workers'
calls meet the dead flows (which shows the schedule really idles them)."""

import pytest

from e2e import built_layer_fixture, dynamodb_fixture  # noqa: F401
from standin import LAYER_ZIP, require_root_namespaces


@pytest.fixture(scope="module", name="table_rows")
def table_rows_fixture(dynamodb):
    from lab.experiments.demo import lmi as demo_lmi
    from lab.net import nat
    from lab.standin.function_net import create_table, scaled_timers

    require_root_namespaces(nat.unavailable_reason())
    create_table(dynamodb, demo_lmi.TABLE)
    args = demo_lmi.parse_args(["--zip", LAYER_ZIP, "--rounds", "1", "--workers", "4", "--busy", "2"])
    runs = demo_lmi.run_all(args, dynamodb, scaled_timers(args.nat_timeout))
    assert [r.error for r in runs] == [None] * len(runs)
    rows = demo_lmi.rows(runs, args)
    print("\n" + demo_lmi.markdown(rows))
    return rows


def _rows(table_rows, configuration):
    return [r for r in table_rows if r["configuration"] == configuration]


def test_layer_on_no_reset_retry_or_hang_and_every_worker_has_the_timer(table_rows):
    """Layer on, reset and silent NAT: busy and idle workers' calls all clean, timers in 4 of 4."""
    on = _rows(table_rows, "layer on")
    assert {(r["nat_mode"], r["phase"]) for r in on} == {(m, p) for m in ("reset", "drop") for p in ("busy", "idle")}
    for row in on:
        assert row["calls"] > 0, row
        assert (row["resets"], row["retries"], row["hangs"], row["failed"]) == (0, 0, 0, 0), row
        assert row["workers_with_timer"] == row["workers"] == 4, row


def test_without_the_layer_idle_workers_meet_dead_flows(table_rows):
    """No layer: every idle worker's call is reset (reset NAT) or hangs to the read timeout (silent
    NAT) and is retried; busy workers' calls are clean; no worker has a keep-alive timer."""
    for row in _rows(table_rows, "no layer"):
        if row["phase"] == "idle":
            assert row["calls"] > 0 and row["resets"] == row["retries"] == row["calls"], row
            assert row["hangs"] == (row["calls"] if row["nat_mode"] == "drop" else 0), row
        else:
            assert row["resets"] == 0, row
        assert row["workers_with_timer"] == 0 and row["failed"] == 0, row


def test_a_hang_is_an_attempt_unanswered_for_the_read_timeout_not_a_slow_call():
    """hangs counts a call whose attempt got no response for the read timeout (1 s here); a reset
    call that lasted longer only through its retry's slow new handshake (as on a loaded machine)
    is no hang."""
    from types import SimpleNamespace

    from lab.experiments.demo.lmi import waited_out_read_timeout

    def call(*events):
        return SimpleNamespace(events=[{"kind": kind, "t": t} for kind, t in events])

    reset_then_slow_retry = call(("attempt", 10.0), ("exception", 10.01), ("retry", 10.01),
                                 ("attempt", 10.95), ("new_connection", 10.95), ("http_response", 11.4))
    silent_drop = call(("attempt", 10.0), ("exception", 11.002), ("retry", 11.002),
                       ("attempt", 11.3), ("new_connection", 11.3), ("http_response", 11.35))
    slow_answer = call(("attempt", 10.0), ("http_response", 11.5))
    assert [waited_out_read_timeout(c, 1) for c in (reset_then_slow_retry, silent_drop, slow_answer)] == [
        False, True, False]
