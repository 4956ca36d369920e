"""lab/standin/runtime/lab_observe.py: per-invocation attempts, retries and connections for an untouched
handler, with the runtime's bundled botocore (legacy and standard retry mode) and the layer's."""

import pytest

from standin import endpoint_fixture, layer_has_botocore, layer_root_fixture, write_task  # noqa: F401
from lab.standin.lambda_env import LambdaFunction
from lab.standin.runtime_prefix import runtime_boto3

PUTS = """
    import logging, os
    import boto3, botocore

    client = boto3.client("dynamodb", endpoint_url=os.environ["LAB_ENDPOINT"])

    def handler(event, context):
        for _ in range(event.get("puts", 1)):
            client.put_item(TableName="lab", Item={"pk": {"S": "a"}})
        if event.get("warn"):
            logging.getLogger("urllib3.connectionpool").warning("lab warning passes through")
        return {"botocore": botocore.__version__}
"""


def _run(fn, endpoint):
    steady = fn.invoke({"puts": 2})
    reused = fn.invoke({"puts": 2})
    endpoint.reset_requests(1)
    reset = fn.invoke({"puts": 2})
    return steady, reused, reset


def _check(steady, reused, reset):
    assert steady.ok and reused.ok and reset.ok
    assert steady.counters["attempts"] == 2 and steady.counters["new_connections"] == 1
    assert reused.counters["new_connections"] == 0 and reused.counters["retries"] == 0
    assert reused.counters["connection_errors"] == 0
    # The pooled connection was reset under the first put: one retry on one new connection.
    assert reset.counters["attempts"] == 3 and reset.counters["http_responses"] == 2
    assert reset.counters["retries"] == 1 and reset.counters["connection_errors"] == 1
    assert reset.counters["new_connections"] == 1


@pytest.mark.parametrize("mode", ["legacy", "standard"])
def test_counters_with_the_bundled_botocore(tmp_path, endpoint, mode):
    """The runtime-kind botocore (RUNTIME_BOTO3): a reset shows as 1 retry, 1 connection error, 1 new
    connection, in either retry mode; steady reuse shows none."""
    task = write_task(tmp_path / "task", puts=PUTS)
    env = {"LAB_ENDPOINT": endpoint.url, "AWS_RETRY_MODE": mode}
    with LambdaFunction(task, "puts.handler", env=env) as fn:
        steady, reused, reset = _run(fn, endpoint)
    assert steady.result["botocore"] == runtime_boto3()
    _check(steady, reused, reset)
    if mode == "legacy":  # only the legacy handler logs the exception it retries
        assert reset.counters["exceptions"] == ["ConnectionClosedError(ProtocolError)"]


def test_counters_with_the_layer_botocore(tmp_path, endpoint, layer_root):
    """The layer's botocore (standard mode by default, urllib3 2) gives the same counts."""
    if not layer_has_botocore(layer_root):
        pytest.skip("build/layer.zip not built: the layer has no botocore of its own yet")
    task = write_task(tmp_path / "task", puts=PUTS)
    with LambdaFunction(task, "puts.handler", opt=layer_root, env={"LAB_ENDPOINT": endpoint.url}) as fn:
        steady, reused, reset = _run(fn, endpoint)
    assert steady.result["botocore"] != runtime_boto3()
    _check(steady, reused, reset)


def test_debug_records_stay_out_of_the_function_output(tmp_path, endpoint):
    """The counters' DEBUG records are not printed; the function's own WARNING still is."""
    task = write_task(tmp_path / "task", puts=PUTS)
    with LambdaFunction(task, "puts.handler", env={"LAB_ENDPOINT": endpoint.url}) as fn:
        record = fn.invoke({"puts": 1, "warn": True})
    output = record.stdout + record.stderr
    assert any("lab warning passes through" in line for line in output), output
    assert not [line for line in output if "Sending http request" in line or "Starting new" in line]


def test_without_observe_no_counters(tmp_path, endpoint):
    """observe=False: the runtime runs without the lab's logging handler and reports no counters."""
    task = write_task(tmp_path / "task", puts=PUTS)
    with LambdaFunction(task, "puts.handler", env={"LAB_ENDPOINT": endpoint.url}, observe=False) as fn:
        record = fn.invoke({"puts": 1})
    assert record.ok and record.counters["attempts"] == 0 and endpoint.requests == 1


def test_counters_see_a_nat_that_forgot_the_flow(tmp_path):
    """Function in a NAT namespace (idle timeout 2 s, reset mode), frozen through a 3 s gap: the next
    call shows the reset as 1 connection error, 1 retry and 1 new connection."""
    from endpoint import Endpoint
    from lab.net import nat
    from lab.standin.driver import run
    from standin import require_root_namespaces

    require_root_namespaces(nat.unavailable_reason())
    task = write_task(tmp_path / "task", puts=PUTS)
    with nat.NatNamespace(timeout=2, mode="reset") as namespace:
        server = Endpoint(namespace.host_address)
        try:
            with LambdaFunction(task, "puts.handler", env={"LAB_ENDPOINT": server.url},
                                prefix=namespace.command([]), api_sock_factory=namespace.socket) as fn:
                warm, quick, after_gap = run(fn, {"puts": 1}, gaps_s=[0, 0.2, 3.0])
        finally:
            server.close()
    assert warm.counters["new_connections"] == 1
    assert quick.counters["new_connections"] == 0 and quick.counters["retries"] == 0
    assert after_gap.ok and after_gap.gap_s >= 3.0
    assert after_gap.counters["connection_errors"] == 1 and after_gap.counters["retries"] == 1
    assert after_gap.counters["new_connections"] == 1
