"""End-to-end behind a NAT: the built layer zip under the Lambda stand-in (CPython 3.12), each
function in its own network namespace whose conntrack forgets a flow after NAT_TIMEOUT (3 s, the
scaled-down 350 s), DynamoDB Local over TLS on the far side, the function frozen through gaps of
GAP (4.5 s). The layer's timers are scaled the same way (IDLE=1, INTERVAL=1, COUNT=3, MAX_IDLE=2).

Configurations compared: ON (layer, AWS_PYTHON_KEEPALIVE=1), OFF (layer, switch absent), NONE (no
layer: the runtime's bundled-kind botocore, RUNTIME_BOTO3). Configurations run side by side, one namespace each.
"""

import subprocess

from e2e import EXAMPLE, GAP, NAT_TIMEOUT, SHORT_TIMEOUT_HANDLER, SOCKOPT_HANDLER, TABLE  # noqa: F401
from e2e import built_layer_fixture, dynamodb_fixture, networks_fixture  # noqa: F401
from e2e import lines_with, probe_task, show, side_by_side
from lab.standin.function_net import keepalive_env, run_gaps, scaled_timers

TIMERS = scaled_timers(NAT_TIMEOUT)
ON = keepalive_env(**TIMERS)


def _gap_run(net, task, handler, opt, env, gaps, no_packets=False):
    with net.function(task, handler, table=TABLE, python="3.12", opt=opt, env=env) as fn:
        return run_gaps(fn, net, {}, gaps, no_packets=no_packets)


def _errors(records):
    return sum(r.counters["connection_errors"] + r.counters["retries"] for r in records)


def test_timers_scaled_for_the_nat():
    """The scaled timers the NAT tests rely on: probes well inside the NAT timeout, MAX_IDLE just under it."""
    assert TIMERS == {"idle": 1, "interval": 1, "count": 3, "max_idle": 2}


def test_sockets_carry_the_keepalive_options(tmp_path, built_layer, networks):
    """ON: the pooled socket has SO_KEEPALIVE and the configured IDLE/INTERVAL/COUNT (getsockopt in the
    function) and the namespace's kernel runs a keepalive timer on it (ss); OFF: no keep-alive at all."""
    on_net, off_net = networks("reset", 2)
    task = probe_task(tmp_path, SOCKOPT_HANDLER)

    def run(net, env):
        with net.function(task, "probe.handler", table=TABLE, python="3.12", opt=built_layer, env=env) as fn:
            record = fn.invoke({})
            # The function is frozen now, its connection idle in the pool: what the kernel shows.
            ss = subprocess.run(net.nat.command(["ss", "-tnoH", "state", "established",
                                                 "dport = :%d" % net.netem.port]),
                                capture_output=True, text=True, timeout=10).stdout
            return record, ss

    (on, on_ss), (off, off_ss) = side_by_side(lambda: run(on_net, ON), lambda: run(off_net, {}))
    print(on.result, on_ss, off.result, off_ss, sep="\n")
    assert on.ok and off.ok
    assert on.result == [{"SO_KEEPALIVE": 1, "TCP_KEEPIDLE": 1, "TCP_KEEPINTVL": 1, "TCP_KEEPCNT": 3}]
    assert len(off.result) == 1 and off.result[0]["SO_KEEPALIVE"] == 0
    assert off.result[0]["TCP_KEEPIDLE"] == 7200  # the kernel default botocore never changes
    assert "timer:(keepalive" in on_ss, on_ss
    assert on_ss.strip() and "timer:(keepalive" not in off_ss, off_ss


def test_nat_reset_layer_on_no_errors_off_and_none_reset(built_layer, networks):
    """NAT answers a forgotten flow with a RST: ON crosses two gaps longer than the NAT timeout with
    0 connection errors, 0 retries and no new connection (probes kept the flow); OFF and NONE meet
    the reset (a connection error and a retry after every gap)."""
    on_net, off_net, none_net = networks("reset", 3)
    gaps = [GAP, GAP]
    on, off, none = side_by_side(
        lambda: _gap_run(on_net, EXAMPLE, "app.handler", built_layer, ON, gaps),
        lambda: _gap_run(off_net, EXAMPLE, "app.handler", built_layer, {}, gaps),
        lambda: _gap_run(none_net, EXAMPLE, "app.handler", None, {}, gaps))
    show("on", on), show("off", off), show("none", none)
    assert all(r.ok for r in on + off + none)
    assert all(r.gap_s > NAT_TIMEOUT + 1 for r in on[1:] + off[1:] + none[1:])
    assert _errors(on) == 0
    assert sum(r.counters["new_connections"] for r in on[1:]) == 0
    assert not [line for r in on[1:] for line in lines_with(r.hook_lines(), "new connection")]
    for records in (off, none):
        for r in records[1:]:
            assert r.counters["connection_errors"] >= 1 or r.counters["retries"] >= 1, r.counters


def test_nat_silent_drop_layer_on_no_errors_off_and_none_hang(tmp_path, built_layer, networks):
    """NAT drops a forgotten flow's packets silently: ON crosses the gap on the same connection with 0
    errors and 0 retries; OFF and NONE hang until the (shortened, 2 s) read_timeout, then retry."""
    on_net, off_net, none_net = networks("drop", 3)
    task = probe_task(tmp_path, SHORT_TIMEOUT_HANDLER)
    on, off, none = side_by_side(
        lambda: _gap_run(on_net, task, "probe.handler", built_layer, ON, [GAP]),
        lambda: _gap_run(off_net, task, "probe.handler", built_layer, {}, [GAP]),
        lambda: _gap_run(none_net, task, "probe.handler", None, {}, [GAP]))
    show("on", on), show("off", off), show("none", none)
    assert all(r.ok for r in on + off + none)
    assert _errors(on) == 0 and on[1].duration_ms < 1000
    assert not lines_with(on[1].hook_lines(), "new connection")  # the probes kept the flow
    for records in (off, none):
        hung = records[1]
        assert hung.duration_ms >= 2000, hung.duration_ms  # waited out read_timeout
        assert hung.counters["connection_errors"] >= 1 or hung.counters["retries"] >= 1, hung.counters


def test_max_idle_replaces_a_stale_connection_when_no_packet_leaves(built_layer, networks):
    """Nothing leaves the frozen environment (probes dropped before the NAT sees them): with MAX_IDLE=2
    the connection idle 4.5 s is replaced before reuse ("max idle"), with no error and no retry;
    the same run with MAX_IDLE=0 (never replace) meets the NAT's reset."""
    # INTERVAL=30 here: the one dropped probe goes out 1 s into the gap and the next only 30 s later,
    # so no probe meets the NAT's reset just after the thaw and closes the connection before the
    # request does ("peer closed"); what replaces the connection is then MAX_IDLE alone.
    timers = dict(TIMERS, interval=30)
    max_idle_net, never_net = networks("reset", 2)
    kept, never = side_by_side(
        lambda: _gap_run(max_idle_net, EXAMPLE, "app.handler", built_layer,
                         keepalive_env(**timers), [GAP], no_packets=True),
        lambda: _gap_run(never_net, EXAMPLE, "app.handler", built_layer,
                         keepalive_env(**dict(timers, max_idle=0)), [GAP], no_packets=True))
    show("max_idle=2", kept), show("max_idle=0", never)
    assert all(r.ok for r in kept + never)
    after = kept[1]
    assert after.counters["connection_errors"] == 0 and after.counters["retries"] == 0
    # The stand-in's new_connections counter only sees urllib3 creating a connection object; a
    # pooled one closed by the hook reconnects in place, so the hook's own line is the evidence.
    assert len(lines_with(after.hook_lines(), "new connection")) == 1, after.hook_lines()
    assert lines_with(after.hook_lines(), "(max idle)"), after.hook_lines()
    assert never[1].counters["connection_errors"] >= 1 and never[1].counters["retries"] >= 1


def test_answered_probes_keep_a_connection_past_max_idle(built_layer, networks):
    """The kernel keeps probing while the process is frozen (SIGSTOP only): the connection idle 4.5 s
    (> MAX_IDLE=2) is kept because TCP_INFO shows a probe answered within the last seconds: no new
    connection, no error, and the hook says why."""
    (net,) = networks("reset", 1)
    records = _gap_run(net, EXAMPLE, "app.handler", built_layer, ON, [GAP])
    show("sigstop", records)
    after = records[1]
    assert after.ok and after.counters["new_connections"] == 0 and _errors(records) == 0
    assert not lines_with(after.hook_lines(), "new connection")
    assert lines_with(after.hook_lines(), "keep-alive answered"), after.hook_lines()
