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


def test_a_single_attempt_runs_the_callee_once_and_still_loses_the_answer(table_rows):
    """Stock with total_max_attempts=1: one execution, and ReadTimeoutError after the read timeout."""
    for row in _rows(table_rows, "advice-once"):
        assert row["outcome"] == "no answer: ReadTimeoutError" and row["requests_received"] == 1, row
