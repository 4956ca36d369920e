"""metrics.py: CloudWatch Embedded Metric Format records, valid per the EMF specification's schema
and CloudWatch's extraction rules, written by a function run the way the runtime runs it.

The schema is the one the EMF specification publishes ("You can use the following schema to
validate embedded metric format documents", docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/
CloudWatch_Embedded_Metric_Format_Specification.html; also awsdocs/amazon-cloudwatch-user-guide,
doc_source/CloudWatch_Embedded_Metric_Format_Specification.md), with its $id/title/examples
annotations left out.  The rules it cannot express are checked by ``assert_extractable``.
"""

import json
import time

import jsonschema
import pytest

from conftest import ON
from ddb_server import DynamoDBShapedServer

_NAME = {"type": "string", "pattern": "^(.*)$", "minLength": 1, "maxLength": 255}
_UNITS = ("Seconds|Microseconds|Milliseconds|Bytes|Kilobytes|Megabytes|Gigabytes|Terabytes|Bits|"
          "Kilobits|Megabits|Gigabits|Terabits|Percent|Count|Bytes\\/Second|Kilobytes\\/Second|"
          "Megabytes\\/Second|Gigabytes\\/Second|Terabytes\\/Second|Bits\\/Second|Kilobits\\/Second|"
          "Megabits\\/Second|Gigabits\\/Second|Terabits\\/Second|Count\\/Second|None")
EMF_SCHEMA = {
    "type": "object",
    "required": ["_aws"],
    "properties": {
        "_aws": {
            "type": "object",
            "required": ["Timestamp", "CloudWatchMetrics"],
            "properties": {
                "Timestamp": {"type": "integer"},
                "CloudWatchMetrics": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["Namespace", "Dimensions", "Metrics"],
                        "properties": {
                            "Namespace": _NAME,
                            "Dimensions": {
                                "type": "array",
                                "minItems": 1,
                                "items": {"type": "array", "minItems": 0, "maxItems": 9, "items": _NAME},
                            },
                            "Metrics": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "required": ["Name"],
                                    "properties": {
                                        "Name": _NAME,
                                        "Unit": {"type": "string", "pattern": "^(%s)$" % _UNITS},
                                    },
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


def assert_extractable(record):
    """What the specification says in prose and CloudWatch enforces when it extracts metrics."""
    jsonschema.validate(record, EMF_SCHEMA)
    assert len(json.dumps(record)) < 256 * 1024  # a log event's limit
    now_ms = time.time() * 1000
    # CloudWatch accepts data points up to two weeks old and two hours ahead.
    assert now_ms - 14 * 86400e3 < record["_aws"]["Timestamp"] < now_ms + 2 * 3600e3
    for directive in record["_aws"]["CloudWatchMetrics"]:
        assert not directive["Namespace"].startswith("AWS/")
        assert 1 <= len(directive["Metrics"]) <= 100  # "MUST NOT contain more than 100"
        for dimension_set in directive["Dimensions"]:
            for key in dimension_set:  # target members: on the root node, string values
                assert isinstance(record.get(key), str) and record[key], (key, record)
        for metric in directive["Metrics"]:
            value = record.get(metric["Name"])  # a number or an array of at most 100 numbers
            values = value if isinstance(value, list) else [value]
            assert 1 <= len(values) <= 100, metric
            assert all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values), value


def emf_records(stdout):
    records = []
    for line in stdout.splitlines():
        if line.startswith("{") and '"_aws"' in line:
            records.append(json.loads(line))
    return records


def totals(records):
    """{"Reason:first use": n, ..., "StaleReuses": n} summed over records."""
    result = {}
    for record in records:
        for directive in record["_aws"]["CloudWatchMetrics"]:
            for metric in directive["Metrics"]:
                name = metric["Name"]
                if name == "ConnectMs":
                    continue
                key = "Reason:" + record["Reason"] if name == "NewConnections" else name
                result[key] = result.get(key, 0) + record[name]
    return result


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
    assert len(records) == 7
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
    with DynamoDBShapedServer(stale_after_s=0.5) as stale_server:
        run = run_function(GAPS_METRICS, env=env, event={"url": stale_server.url, "gaps": [0.8, 0.8]})
    assert run.result == "done", run
    records = emf_records(run.stdout)
    for record in records:
        assert_extractable(record)
        assert record["FunctionName"] == "fn-under-test"
    assert totals(records) == {"Reason:first use": 1, "Reason:peer closed": 1,
                               "Reason:learned idle": 1, "StaleReuses": 1}, run.stdout
    assert all(isinstance(r.get("ConnectMs"), float) for r in records if "Reason" in r), records


def test_reused_after_probe_counted(run_function, server):
    """A connection idle past max idle, kept because keep-alive probes were answered: one
    ReusedAfterProbe, and no second connection."""
    env = dict(ON, AWS_PYTHON_KEEPALIVE_METRICS="1", AWS_PYTHON_KEEPALIVE_MAX_IDLE="2",
               AWS_PYTHON_KEEPALIVE_IDLE="1", AWS_PYTHON_KEEPALIVE_INTERVAL="1")
    run = run_function(GAPS_METRICS, env=env, event={"url": server.url, "gaps": [3.5]})
    assert run.result == "done", run
    records = emf_records(run.stdout)
    [assert_extractable(record) for record in records]
    assert totals(records) == {"Reason:first use": 1, "ReusedAfterProbe": 1}, run.stdout


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
