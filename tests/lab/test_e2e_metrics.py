"""End-to-end: the layer's EMF metrics under the real awslambdaric runtime loop (the stand-in, CPython
3.12), frozen between invocations. What each invocation counted is on that invocation's stdout
(written when the runtime asks for the next invocation, before the freeze), aggregated to one line
per reason, valid EMF; an invocation that counted nothing writes nothing."""

import os
import sys
import time

from standin import endpoint_fixture, layer_root_fixture, write_task  # noqa: F401
from lab.standin.lambda_env import LambdaFunction

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hook"))
from emf import assert_extractable, emf_records, totals  # noqa: E402

HANDLER = """
    import boto3

    client = boto3.client("dynamodb")

    def handler(event, context):
        for _ in range(event.get("new_clients", 0)):
            boto3.client("dynamodb").put_item(TableName="lab", Item={"pk": {"S": "new"}})
        client.put_item(TableName="lab", Item={"pk": {"S": "module"}})
        return {"ok": True}
"""


def test_counts_reach_stdout_within_their_invocation(tmp_path, layer_root, endpoint):
    """Invocation 1 opens three connections (one EMF line, NewConnections=3 "first use"); 2 reuses
    (no line); 3 after 1.5 s > max idle 1 s ("max idle"); 4 meets a reset on the reused connection
    (the retry's "peer closed" and StaleReuses=1, a line each). Nothing is written during init."""
    task = write_task(tmp_path / "task", probe=HANDLER)
    env = {"AWS_PYTHON_KEEPALIVE": "1", "AWS_PYTHON_KEEPALIVE_METRICS": "1",
           "AWS_PYTHON_KEEPALIVE_MAX_IDLE": "1", "AWS_ENDPOINT_URL_DYNAMODB": endpoint.url}
    with LambdaFunction(task, "probe.handler", python="3.12", opt=layer_root, env=env) as fn:
        init = [line.text for line in fn.init_lines]
        first = fn.invoke({"new_clients": 2})
        reused = fn.invoke({})
        time.sleep(1.5)
        idle = fn.invoke({})
        endpoint.reset_requests(1)
        stale = fn.invoke({})
    records = [first, reused, idle, stale]
    assert all(r.ok and r.thawed for r in records), records
    assert emf_records("\n".join(init)) == []
    lines = [emf_records("\n".join(r.stdout)) for r in records]
    for emitted in lines:
        for record in emitted:
            assert_extractable(record)
            assert record["FunctionName"] == "lab-function"
    assert [len(emitted) for emitted in lines] == [1, 0, 1, 2], lines
    assert totals(lines[0]) == {"Reason:first use": 3}
    assert len(lines[0][0]["ConnectMs"]) == 3
    assert totals(lines[2]) == {"Reason:max idle": 1}
    assert totals(lines[3]) == {"Reason:peer closed": 1, "StaleReuses": 1}
