"""End-to-end behind a NAT for an async function: examples/async_put_item (aiobotocore client entered
at import, one event loop for the environment) under the Lambda stand-in (CPython 3.12), with the
aiobotocore of lab/async-requirements.txt bundled in its task folder, in a namespace whose conntrack
forgets a flow after NAT_TIMEOUT (3 s), frozen through gaps of GAP (4.5 s: shorter than aiohttp's
own 12 s idle limit, so aiohttp reuses the pooled connection and only the network decides).

Per invocation the handler makes exactly one put, so ``attempts - 1`` is the number of attempts that
met the NAT's reset (aiobotocore logs its attempts and retries through botocore's loggers, which
lab_observe counts). New connections: the function's Netem's accepted count (aiohttp logs none).
"""

import statistics

import pytest

from e2e import GAP, NAT_TIMEOUT, built_layer_fixture, dynamodb_fixture, networks_fixture  # noqa: F401
from e2e import TABLE, side_by_side
from lab.standin.function_net import keepalive_env, run_gaps, scaled_timers

ON = keepalive_env(**scaled_timers(NAT_TIMEOUT))


@pytest.fixture(scope="module", name="async_task")
def async_task_fixture():
    from lab.experiments.async_patterns.run import async_task

    return async_task("3.12")


def _gap_run(net, task, opt, env):
    with net.function(task, "app.handler", table=TABLE, python="3.12", opt=opt, env=env) as fn:
        records = run_gaps(fn, net, {}, [GAP, GAP])
        return records, net.netem.accepted


def _resets(record):
    return record.counters["attempts"] - 1


def show(label, records, accepted):
    """One line per invocation (visible with -s and in failure reports). lab_observe's
    connection_errors is not used: it counts urllib3's responses, and aiohttp logs none."""
    for r in records:
        print("%-11s gap=%-4s ok=%s %7.1f ms resets=%d retries=%d" % (
            label, "-" if r.gap_s is None else "%.1f" % r.gap_s, r.ok, r.duration_ms or -1,
            _resets(r), r.counters["retries"]))
    print("%-11s connections accepted by Netem: %d" % (label, accepted))


def _p50(records):
    return statistics.median(r.duration_ms for r in records[1:])


def test_layer_on_no_reset_off_and_none_reset_after_every_gap(built_layer, networks, async_task):
    """Layer on (timers scaled to the NAT): the pooled aiohttp connection crosses both gaps, kept by
    keep-alive probes: 0 resets, 0 retries, Netem accepted only the warm-up's connection. No layer,
    and layer present but switched off: after every gap the put's first attempt meets the NAT's
    reset and aiobotocore retries on a new connection (the invocation still succeeds)."""
    on_net, off_net, none_net = networks("reset", 3)
    (on, on_accepted), (off, off_accepted), (none, none_accepted) = side_by_side(
        lambda: _gap_run(on_net, async_task, built_layer, ON),
        lambda: _gap_run(off_net, async_task, built_layer, {}),
        lambda: _gap_run(none_net, async_task, None, {}))
    show("async-on", on, on_accepted), show("async-off", off, off_accepted)
    show("async-none", none, none_accepted)
    print("p50 after a gap: on %.1f ms, off %.1f ms, none %.1f ms" % (_p50(on), _p50(off), _p50(none)))
    assert all(r.ok for r in on + off + none)
    assert all(r.gap_s > NAT_TIMEOUT + 1 for r in on[1:] + off[1:] + none[1:])
    assert sum(_resets(r) for r in on) == 0 and sum(r.counters["retries"] for r in on) == 0
    assert on_accepted == 1
    for records, accepted in ((off, off_accepted), (none, none_accepted)):
        assert _resets(records[0]) == 0 and records[0].counters["retries"] == 0  # the warm-up is clean
        for r in records[1:]:
            assert _resets(r) >= 1 and r.counters["retries"] >= 1, r.counters
        assert accepted >= 3  # the warm-up's connection plus at least one new one after each gap
