"""metrics.py: CloudWatch Embedded Metric Format records, valid per the EMF specification's schema
and CloudWatch's extraction rules (emf.py), written by a function run the way the runtime runs it."""

import time

import pytest

from conftest import ON, python_with_layer
from ddb_server import DynamoDBShapedServer
from emf import assert_extractable, emf_records, totals

@pytest.fixture
def metrics_module(monkeypatch):
    from aws_keepalive import metrics, settings

    monkeypatch.setattr(metrics, "_pending", None)
    monkeypatch.setattr(metrics, "_runtime_hooked", False)
    monkeypatch.setattr(metrics, "enabled", False)
    metrics.configure(settings.Settings(metrics=True), {"AWS_LAMBDA_FUNCTION_NAME": "my-function"})
    return metrics


def test_every_kind_of_record_is_valid_emf(metrics_module):
    """All seven reasons, 150 timed connections under one reason (arrays hold at most 100) and the
    two counters: every record passes the schema and the extraction rules; counts are exact."""
    metrics = metrics_module
    reasons = ["first use", "max idle", "learned idle", "restored", "peer closed", "pool full",
               "keepalive_timeout"]
    pending = {"reasons": {}, "counts": {"StaleReuses": 2, "ReusedAfterProbe": 1}}
    for reason in reasons:
        pending["reasons"][reason] = [1, [12.5]]
    pending["reasons"]["pool full"] = [150, [float(i) for i in range(100)]]
    records = metrics.records(pending, int(time.time() * 1000))
    assert len(records) == 8  # one per reason, one for the counters
    assert [sorted(k for k in r if k[0].isupper()) for r in records][-1] == [
        "FunctionName", "ReusedAfterProbe", "StaleReuses"]
    for record in records:
        assert_extractable(record)
        assert record["FunctionName"] == "my-function"
        assert record["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "aws-python-keepalive"
    assert totals(records) == dict({"Reason:" + r: 1 for r in reasons}, **{
        "Reason:pool full": 150, "StaleReuses": 2, "ReusedAfterProbe": 1})


def test_without_function_name_no_empty_dimension_value(metrics_module, monkeypatch):
    """Outside Lambda (no AWS_LAMBDA_FUNCTION_NAME) the records carry no FunctionName dimension."""
    metrics = metrics_module
    monkeypatch.setattr(metrics, "_function_name", None)
    records = metrics.records({"reasons": {}, "counts": {"StaleReuses": 1}}, int(time.time() * 1000))
    (record,) = records
    assert_extractable(record)
    assert "FunctionName" not in record
    assert record["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [[]]


def test_nothing_counted_nothing_written(metrics_module, capsys):
    """A flush with nothing counted writes nothing."""
    metrics_module.flush()
    assert capsys.readouterr().out == ""


GAPS_METRICS = """
    import time
    import boto3

    def handler(event, context):
        client = boto3.client("dynamodb", endpoint_url=event["url"])
        client.put_item(TableName="table", Item={"pk": {"S": "0"}})
        for gap in event["gaps"]:
            time.sleep(gap)
            client.put_item(TableName="table", Item={"pk": {"S": "1"}})
        return "done"
"""


def test_function_writes_stale_reuse_and_reasons(run_function):
    """A function behind a middlebox that forgets idle flows: its stdout holds valid EMF records
    counting one stale reuse and the connections by reason (first use, the retry's, learned idle),
    with FunctionName and a ConnectMs per connection."""
    env = dict(ON, AWS_PYTHON_KEEPALIVE_METRICS="1", AWS_LAMBDA_FUNCTION_NAME="fn-under-test")
    with DynamoDBShapedServer(stale_after_s=0.4) as stale_server:
        run = run_function(GAPS_METRICS, env=env, event={"url": stale_server.url, "gaps": [0.6, 1.0]})
    assert run.result == "done", run
    records = emf_records(run.stdout)
    for record in records:
        assert_extractable(record)
        assert record["FunctionName"] == "fn-under-test"
    assert totals(records) == {"Reason:first use": 1, "Reason:peer closed": 1,
                               "Reason:learned idle": 1, "StaleReuses": 1}, run.stdout
    assert all(isinstance(r.get("ConnectMs"), float) for r in records if "Reason" in r), records


def test_namespace_from_the_variable(run_function, server):
    """AWS_PYTHON_KEEPALIVE_METRICS_NAMESPACE names the namespace of every record."""
    env = dict(ON, AWS_PYTHON_KEEPALIVE_METRICS="1", AWS_PYTHON_KEEPALIVE_METRICS_NAMESPACE="Team/net")
    run = run_function(GAPS_METRICS, env=env, event={"url": server.url, "gaps": []})
    (record,) = emf_records(run.stdout)
    assert [d["Namespace"] for d in record["_aws"]["CloudWatchMetrics"]] == ["Team/net"]


@pytest.mark.parametrize("env", [ON, dict(ON, AWS_PYTHON_KEEPALIVE_METRICS="0"), {}])
def test_off_by_default_writes_nothing(run_function, server, env):
    """Metrics off (the default, 0, or the layer off): no EMF line, and ``metrics.enabled`` stays
    False, so no caller reaches metrics.py."""
    source = GAPS_METRICS.replace('return "done"', (
        'import sys\n        m = sys.modules.get("aws_keepalive.metrics")\n        return bool(m and m.enabled)'))
    run = run_function(source, env=env, event={"url": server.url, "gaps": [0.1]})
    assert run.result is False, run
    assert emf_records(run.stdout) == []


def test_forked_child_does_not_write_the_parents_counts():
    """Counts pending at fork time are written by the parent only, not again by the child (a fresh,
    single-threaded interpreter forks: the child flushes, exits; then the parent flushes)."""
    script = """
import os
from aws_keepalive import metrics, settings

metrics.configure(settings.Settings(metrics=True), {})
metrics._runtime_hooked = True  # as under the runtime loop: counts wait for the invocation's end
metrics.new_connection("first use", 1.0)
pid = os.fork()
if pid == 0:
    metrics.flush()
    os._exit(0)
os.waitpid(pid, 0)
print("parent flushes")
metrics.flush()
"""
    run = python_with_layer(script)
    assert run.returncode == 0, run.stderr
    before, after = run.stdout.split("parent flushes")
    assert emf_records(before) == []
    assert totals(emf_records(after)) == {"Reason:first use": 1}, run.stdout
