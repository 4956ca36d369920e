"""End-to-end SnapStart and provisioned concurrency behind the NAT: the built layer zip under the
stand-in (CPython 3.12), a connection opened during init (a module-level call), DynamoDB Local over
TLS on the far side of a NAT namespace (reset mode, NAT_TIMEOUT 3 s).

SnapStart, as the lab plays it: init runs, awslambdaric runs the before-snapshot hooks and blocks in
``restore/next``; the lab freezes the process (the snapshot) and makes the NAT forget every flow
(``forget_flows``: the restored environment's network path has never seen them); then it answers
``restore/next`` (the restore): the after-restore hooks run, and the first invocation follows.
The layer's default timers are used, so neither a keep-alive probe nor max idle plays a part:
only the restore hook can save the first call.

Configurations side by side, one namespace each: ON (AWS_PYTHON_KEEPALIVE=1), OFF (layer, switch
absent), NONE (no layer: the runtime's bundled-kind botocore, RUNTIME_BOTO3).
"""

import time

from e2e import GAP, NAT_TIMEOUT, TABLE, built_layer_fixture, dynamodb_fixture, networks_fixture  # noqa: F401
from e2e import lines_with, probe_task, show, side_by_side
from lab.standin.function_net import keepalive_env, scaled_timers

INIT_CALL = """
    import os
    import boto3

    client = boto3.client("dynamodb")
    client.put_item(TableName=os.environ["TABLE_NAME"], Item={"pk": {"S": "init"}})

    def handler(event, context):
        client.put_item(TableName=os.environ["TABLE_NAME"], Item={"pk": {"S": "invoke"}})
        return {"ok": True}
"""

SNAP_START = {"AWS_LAMBDA_INITIALIZATION_TYPE": "snap-start"}
ON = dict(keepalive_env(), **SNAP_START)


def _snapstart_run(net, task, opt, env):
    with net.function(task, "probe.handler", table=TABLE, python="3.12", opt=opt, env=env) as fn:
        assert fn.api.restore_waiting, "the runtime did not ask for the snapshot (restore/next)"
        # The process is frozen (the snapshot). Its kernel may still owe the init connection a
        # delayed ACK (up to 200 ms): let it go out first, or after the flush it would meet the
        # NAT's reset and close the connection before the first call (an RST nobody gets on Lambda).
        # 1 s, five times the delayed-ACK ceiling, so that a loaded CI machine keeps the margin.
        time.sleep(1.0)
        # Nothing crosses the veth until the restore, as nothing leaves a snapshot, and the NAT
        # forgets every flow.
        with net.nat.frozen_while(True):
            net.nat.forget_flows()
        restore_lines = [line.text for line in fn.restore()]
        record = fn.invoke({})
    record.restore_lines = restore_lines
    return [record]


def _errors(record):
    return record.counters["connection_errors"] + record.counters["retries"]


def test_snapstart_restore_layer_on_one_clean_connection(tmp_path, built_layer, networks):
    """After restore, ON's first call opens one clean connection (reason "restored"): 0 errors, 0
    retries; OFF and NONE reuse the init connection, meet the NAT's reset and retry."""
    on_net, off_net, none_net = networks("reset", 3)
    task = probe_task(tmp_path, INIT_CALL)
    (on,), (off,), (none,) = side_by_side(
        lambda: _snapstart_run(on_net, task, built_layer, ON),
        lambda: _snapstart_run(off_net, task, built_layer, dict(SNAP_START)),
        lambda: _snapstart_run(none_net, task, None, dict(SNAP_START)))
    show("on", [on]), show("off", [off]), show("none", [none])
    assert on.ok and off.ok and none.ok
    assert _errors(on) == 0, on.counters
    opened = lines_with(on.hook_lines(), "new connection")
    assert len(opened) == 1 and "(restored)" in opened[0], on.hook_lines()
    assert not [line for line in on.hook_lines() + on.restore_lines if "WARN" in line]
    for record in (off, none):
        assert record.counters["connection_errors"] >= 1 and record.counters["retries"] >= 1, record.counters


def test_provisioned_concurrency_init_long_before_first_call(tmp_path, built_layer, networks):
    """Provisioned concurrency: init's connection sits GAP s (> NAT timeout) before the first call,
    nothing leaving the frozen environment; MAX_IDLE (2 s, scaled) replaces it ("max idle"): 0 errors,
    0 retries."""
    (net,) = networks("reset", 1)
    task = probe_task(tmp_path, INIT_CALL)
    # INTERVAL=30: no second probe meets the NAT's reset just after the thaw (see test_e2e_nat).
    timers = dict(scaled_timers(NAT_TIMEOUT), interval=30)
    env = dict(keepalive_env(**timers), AWS_LAMBDA_INITIALIZATION_TYPE="provisioned-concurrency")


    with net.function(task, "probe.handler", table=TABLE, python="3.12", opt=built_layer, env=env) as fn:
        with net.nat.frozen_while(True):
            time.sleep(GAP)
        record = fn.invoke({})
    show("pc", [record])
    assert record.ok and _errors(record) == 0, record.counters
    opened = lines_with(record.hook_lines(), "new connection")
    assert len(opened) == 1 and "(max idle)" in opened[0], record.hook_lines()
