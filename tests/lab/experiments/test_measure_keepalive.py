"""The measurement's scenario runner, on the two relations it exists to show (T = 3 s here)."""

import pytest

from lab.experiments.measure_keepalive.run import Scenario, _parallel, run_socket

pytestmark = pytest.mark.usefixtures("nat_available")


def test_interval_at_or_above_timeout_loses_the_flow_after_the_first_probe():
    """IDLE < T <= INTVL: the first probe keeps the flow, the next comes too late and meets the
    NAT's reset (the kernel closes the socket), while IDLE = INTVL < T keeps it open."""
    late = Scenario("late", timers=(1, 4, 3))
    good = Scenario("good", timers=(1, 1, 3))
    _parallel(run_socket, [late, good], 3, 6.0)
    assert late.result["outcome"] == "closed:ECONNRESET", late.result
    assert 4.5 <= late.result["died_at"] <= 5.8, late.result  # second probe at IDLE + INTVL = 5 s
    assert good.result["outcome"] == "ok", good.result


def test_freeze_kernel_gives_up_before_the_nat_when_idle_plus_cnt_intervals_below_timeout():
    """Freeze (b) ending just after the NAT forgot the flow: with IDLE + CNT*INTVL < T the socket
    is already closed (ETIMEDOUT, no reset to meet); with a CNT too large it meets the reset."""
    short = Scenario("cnt1", how="freeze", timers=(1, 1, 1), settle=1.5, gap=3.0)
    long = Scenario("cnt5", how="freeze", timers=(1, 1, 5), settle=1.5, gap=3.0)
    _parallel(run_socket, [short, long], 3, 3.0)
    assert short.result["outcome"] == "closed:ETIMEDOUT", short.result
    assert long.result["outcome"] == "reset", long.result
    assert long.result["last_ack_ms"] >= 3000  # TCP_INFO shows the freeze: replace, do not reuse
