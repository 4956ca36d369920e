"""lab/experiments/longcall/run.py, shortened (make demo-longcall's two main callers, NAT timeout 2 s): a
synchronous Invoke whose callee answers after 2.3 s (400 s at AWS's scale) through a NAT that forgets
the flow after 2 s (350 s), in reset and silent-drop mode. With the layer, the answer comes back from
one execution; stock botocore with AWS's advice loses it and runs the callee again."""

import pytest

from standin import LAYER_ZIP, require_root_namespaces


@pytest.fixture(scope="module", name="table_rows")
def table_rows_fixture(tmp_path_factory):
    from lab.experiments.longcall import run as longcall
    from lab.net import nat

    require_root_namespaces(nat.unavailable_reason())
    args = longcall.parse_args(["--zip", LAYER_ZIP, "--nat-timeout", "2", "--configs", "advice,advice-once,full"])
    cells = longcall.run_all(args, tmp_path_factory.mktemp("longcall"))
    assert [c.error for c in cells] == [None] * len(cells)
    rows = longcall.rows(cells)
    print("\n" + longcall.markdown(rows))
    return rows


def _rows(table_rows, name):
    found = [r for r in table_rows if r["name"] == name]
    assert {r["nat_mode"] for r in found} == {"reset", "drop"}, found
    return found


def test_the_layer_carries_the_long_call_through_the_expiring_flow(table_rows):
    """Layer (full flavor) with AWS's advice: the answer arrives, from exactly one execution, in both NAT modes."""
    for row in _rows(table_rows, "full"):
        assert row["outcome"] == "answer" and row["answered"] == 1, row
        assert row["requests_received"] == 1, row


def test_stock_with_aws_advice_loses_the_answer_and_runs_the_callee_again(table_rows):
    """Stock botocore with read_timeout above the callee's time and tcp_keepalive=True: no answer, and
    botocore's retry reaches the callee a second time (the flow really expired, in both NAT modes)."""
    for row in _rows(table_rows, "advice"):
        assert row["answered"] == 0, row
        assert row["requests_received"] >= 2, row


def test_the_layer_changes_no_timeout(table_rows):
    """The layer's client keeps the read and connect timeouts stock's has (the user's read_timeout,
    botocore's 60 s connect timeout), its socket waits read_timeout, and carries the layer's timers."""
    stock = [r["client_timeouts"] for r in _rows(table_rows, "advice-once")]
    for row in _rows(table_rows, "full"):
        assert row["client_timeouts"] in stock and row["client_timeouts"]["connect_timeout"] == 60, row
        assert [s["timeout"] for s in row["sockets"]] == [row["client_timeouts"]["read_timeout"]], row
        assert [(s["SO_KEEPALIVE"], s["TCP_KEEPIDLE"], s["TCP_KEEPINTVL"]) for s in row["sockets"]] == [(1, 1, 1)], row


def test_stock_never_loads_the_layer_and_the_full_flavor_runs_on_its_own_botocore(table_rows):
    """The stock caller runs on the runtime's botocore with no aws_keepalive imported; the full
    flavor's caller imported the layer and runs on the layer's own botocore, not the runtime's."""
    from lab.standin.runtime_prefix import runtime_botocore

    runtime = runtime_botocore("3.12")
    for row in _rows(table_rows, "advice-once"):
        assert row["runs_on"] == {"botocore": runtime, "layer_loaded": False}, row
    for row in _rows(table_rows, "full"):
        assert row["runs_on"]["layer_loaded"] is True and row["runs_on"]["botocore"] != runtime, row


def test_a_single_attempt_runs_the_callee_once_and_still_loses_the_answer(table_rows):
    """Stock with total_max_attempts=1: one execution, and ReadTimeoutError after the read timeout."""
    for row in _rows(table_rows, "advice-once"):
        assert row["outcome"] == "no answer: ReadTimeoutError" and row["requests_received"] == 1, row


def test_in_flight_stock_has_so_keepalive_alone_and_the_layer_its_timers(table_rows):
    """Read from the kernel halfway through the call: AWS's advice gives the in-flight socket
    SO_KEEPALIVE with Linux's 7 200 s first probe; the layer's carries its (scaled) 1 s timers."""
    keepalive = [(s["SO_KEEPALIVE"], s["TCP_KEEPIDLE"]) for r in _rows(table_rows, "advice-once")
                 for s in r["sockets_during_call"]]
    assert keepalive == [(1, 7200), (1, 7200)], keepalive
    keepalive = [(s["SO_KEEPALIVE"], s["TCP_KEEPIDLE"], s["TCP_KEEPINTVL"]) for r in _rows(table_rows, "full")
                 for s in r["sockets_during_call"]]
    assert keepalive == [(1, 1, 1), (1, 1, 1)], keepalive


def _recorded_350_run():
    """docs/data/longcall-350.json, the run README renders (a fresh copy, to alter)."""
    import json
    from pathlib import Path

    return json.loads((Path(__file__).resolve().parents[3] / "docs" / "data" / "longcall-350.json").read_text())


def test_the_view_states_the_timers_the_kernel_read_back_not_typed_ones():
    """docs/longcall.md's text at the shipped defaults (no timer variable set) names the timers the
    sockets read back, and no typed-in value: a run with other defaults must not read as 60 s / 10 s."""
    from lab.experiments.longcall import run as longcall

    other = _recorded_350_run()
    assert other["layer_timers"] == {}, other["layer_timers"]
    for row in other["rows"]:
        for sock in row["sockets"] + (row.get("sockets_during_call", []) if not row["stock"] else []):
            sock["TCP_KEEPIDLE"], sock["TCP_KEEPINTVL"] = 120, 20
    text = longcall.view({"longcall-350": other}).split("\n\n")[0]
    assert "TCP_KEEPIDLE 120 s, TCP_KEEPINTVL 20 s" in text, text
    assert "IDLE 60 s" not in text and "INTERVAL 10 s" not in text, text


def test_the_view_shows_the_in_flight_sockets_and_what_each_caller_ran_on():
    """docs/longcall.md gives, from the JSON, stock's and the layer's keep-alive options read in flight
    and each caller's SDK with the layer imported or not."""
    from lab.experiments.longcall import run as longcall

    run = _recorded_350_run()
    for row in run["rows"]:
        idle, interval, sdk = (7200, 75, "1.42.97") if row["stock"] else (60, 10, "1.44.8")
        row["sockets_during_call"] = [{"SO_KEEPALIVE": 1, "TCP_KEEPIDLE": idle, "TCP_KEEPINTVL": interval}]
        row["runs_on"] = {"botocore": sdk, "layer_loaded": not row["stock"]}
    text = longcall.view({"longcall-350": run}).split("\n\n")[0]
    assert ("in flight: stock SO_KEEPALIVE 1, TCP_KEEPIDLE 7200 s, TCP_KEEPINTVL 75 s; with the layer "
            "SO_KEEPALIVE 1, TCP_KEEPIDLE 60 s, TCP_KEEPINTVL 10 s.") in text, text
    assert "botocore 1.42.97, layer not imported (advice, env, advice-once, aio, lmi)" in text, text
    assert "botocore 1.44.8, layer imported (full, hook, aio-layer, lmi-layer)" in text, text
