"""The EMF specification's JSON schema and CloudWatch's extraction rules, for the tests that parse
what a function writes (tests/hook/test_metrics.py, tests/lab/test_e2e_metrics.py).

The schema is the one the EMF specification publishes ("You can use the following schema to
validate embedded metric format documents", docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/
CloudWatch_Embedded_Metric_Format_Specification.html; also awsdocs/amazon-cloudwatch-user-guide,
doc_source/CloudWatch_Embedded_Metric_Format_Specification.md), with its $id/title/examples
annotations left out.  The rules it cannot express are checked by ``assert_extractable``.
"""

import json
import time

import jsonschema

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
