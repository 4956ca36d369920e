"""lab/experiments/longcall/run.py, shortened (make demo-longcall's two main callers, NAT timeout 2 s): a
synchronous Invoke whose callee answers after 2.3 s (400 s at AWS's scale) through a NAT that forgets
the flow after 2 s (350 s), in reset and silent-drop mode. With the layer, the answer comes back from
one execution; stock botocore with AWS's advice loses it and runs the callee again."""

import pytest

from standin import LAYER_ZIP, require_root_namespaces


@pytest.fixture(scope="module", name="table_rows")
def table_rows_fixture():
    from lab import REPO
    from lab.experiments.longcall import run as longcall
    from lab.net import nat

    require_root_namespaces(nat.unavailable_reason())
    args = longcall.parse_args(["--zip", LAYER_ZIP, "--nat-timeout", "2", "--configs", "advice,full"])
    scale = longcall.Scale.of(args.nat_timeout)
    cells = longcall.run_all(args, scale, REPO / "build" / "test-longcall")
    assert [c.error for c in cells] == [None] * len(cells)
    rows = longcall.rows(cells, scale)
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
