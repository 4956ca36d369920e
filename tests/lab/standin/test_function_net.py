"""lab/standin/function_net.py: AWS's own switch as the demo and the soak run it (AWS_SWITCH_ENV), read back
from a real socket of the runtime-kind botocore in the stand-in, with nothing of ours loaded."""

import pytest

from lab.standin.function_net import AWS_SWITCH_ENV, aws_switch_missing
from lab.standin.lambda_env import LambdaFunction, keepalive_timers, timer_seconds
from lab.standin.runtime_prefix import DEFAULT_RUNTIME_BOTO3, runtime_botocore
from standin import endpoint_fixture, write_task  # noqa: F401

# The handler reads its pooled connection's options with getsockopt (urllib3's pool of the client).
HANDLER = """
    import socket
    import boto3, botocore

    client = boto3.client("dynamodb")

    def handler(event, context):
        client.list_tables()
        pools = client._endpoint.http_session._manager.pools
        options = []
        for key in pools.keys():
            for conn in list(pools[key].pool.queue):
                if conn is not None and conn.sock is not None:
                    sock = conn.sock
                    options.append([sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE)]
                                   + [sock.getsockopt(socket.IPPROTO_TCP, o)
                                      for o in (socket.TCP_KEEPIDLE, socket.TCP_KEEPINTVL, socket.TCP_KEEPCNT)])
        import sys
        return {"botocore": botocore.__version__, "options": options,
                "keepalive": [m for m in sys.modules if m.startswith("aws_keepalive")]}
"""


def _run(tmp_path, endpoint, env):
    task = write_task(tmp_path / "task", fn=HANDLER)
    with LambdaFunction(task, "fn.handler", env=dict(env, AWS_ENDPOINT_URL_DYNAMODB=endpoint.url)) as fn:
        record = fn.invoke({})
        timers = keepalive_timers(fn.proc.pid, endpoint.server_address[1])
    assert record.ok, (record.outcome, record.stderr)
    return record.result, timers


def test_aws_switch_sets_so_keepalive_with_the_kernels_two_hour_timer(tmp_path, endpoint):
    """No layer, BOTOCORE_TCP_KEEPALIVE=true on the runtime-kind botocore: the pooled socket has
    SO_KEEPALIVE with the kernel's timers (7200 s / 75 s / 9), ss shows a ~2 h keep-alive timer, and
    nothing of ours is imported."""
    missing = aws_switch_missing(runtime_botocore("3.12"))
    if missing:  # RUNTIME_BOTO3 set to an older runtime-kind copy: the demo says so too
        pytest.skip(missing)
    result, timers = _run(tmp_path, endpoint, AWS_SWITCH_ENV)
    assert result["keepalive"] == []
    assert result["options"] == [[1, 7200, 75, 9]], result
    assert len(timers) == 1 and timers[0] is not None and timer_seconds(timers[0]) > 7000, timers


def test_without_the_switch_no_keepalive(tmp_path, endpoint):
    """The same function without the variable: no SO_KEEPALIVE, no keep-alive timer (so the test
    above sees the variable's effect, not a default)."""
    result, timers = _run(tmp_path, endpoint, {})
    assert result["options"] and result["options"][0][0] == 0, result
    assert timers == [None], timers


def test_aws_switch_missing_names_the_version():
    """A botocore before 1.42.29 gets a "not run" sentence naming it; 1.42.29 and later none."""
    assert "1.42.28" in aws_switch_missing("1.42.28") and "1.42.29+" in aws_switch_missing("1.34.162")
    assert aws_switch_missing("1.42.29") is None and aws_switch_missing("1.44.5") is None
    assert aws_switch_missing(DEFAULT_RUNTIME_BOTO3) is None  # boto3 1.42.97 pins botocore 1.42.97

