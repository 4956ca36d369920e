"""diagnostics.py: what the layer writes (debug, warnings), in text or JSON, and never secrets."""

import json

import pytest

from aws_keepalive import diagnostics
from conftest import ON

DEBUG = dict(ON, AWS_PYTHON_KEEPALIVE_DEBUG="1")

TWO_CLIENT_CALLS = """
    import boto3

    def handler(event, context):
        client = boto3.client("dynamodb", endpoint_url=event["url"])
        client.put_item(TableName="table", Item={"pk": {"S": "secret-item-value"}})
        client.put_item(TableName="table", Item={"pk": {"S": "secret-item-value"}})
        return "ok"
"""


@pytest.fixture(autouse=True)
def _fresh_reports():
    diagnostics._reported.clear()
    yield
    diagnostics.debug_enabled = False


def test_startup_line(run_function, server):
    """Debug on: one startup line with layer version, botocore version and path, settings."""
    import aws_keepalive
    import botocore

    run = run_function(TWO_CLIENT_CALLS, env=DEBUG, event={"url": server.url})
    assert run.returncode == 0, run
    startup = [line for line in run.layer_lines if " on (via pth)" in line]
    assert len(startup) == 1
    assert "aws-keepalive %s" % aws_keepalive.__version__ in startup[0]
    assert "botocore %s at %s" % (botocore.__version__, botocore.__file__) in startup[0]
    assert "keepidle_s=60 keepintvl_s=10 keepcnt=3 pool_size=botocore default max_idle_s=300" in startup[0]


def test_new_connection_line_first_use(run_function, server):
    """Debug on: exactly one line per new connection, with host, reason and milliseconds."""
    run = run_function(TWO_CLIENT_CALLS, env=DEBUG, event={"url": server.url})
    connections = [line for line in run.layer_lines if "new connection" in line]
    assert len(connections) == 1, run.stderr
    assert "new connection to 127.0.0.1:%d (first use) in " % server.server_address[1] in connections[0]
    assert connections[0].endswith(" ms (TCP)")


def test_peer_closed_reason(run_function, server):
    """A pooled connection the server closed is reopened with reason 'peer closed', no retry."""
    server.close_after_response = True
    source = TWO_CLIENT_CALLS.replace('return "ok"', 'return client.put_item(TableName="t", '
                                      'Item={"pk": {"S": "1"}})["ResponseMetadata"]["RetryAttempts"]')
    run = run_function(source, env=DEBUG, event={"url": server.url})
    assert run.returncode == 0, run
    reasons = [line.split("(")[1].split(")")[0] for line in run.layer_lines if "new connection" in line]
    assert reasons == ["first use", "peer closed", "peer closed"], run.stderr
    assert run.result == 0


def test_pool_full_reason(run_function, server):
    """A second connection opened while the first is busy in another thread says 'pool full'."""
    server.delay_s = 0.3
    source = """
        import threading
        import boto3

        def handler(event, context):
            client = boto3.client("dynamodb", endpoint_url=event["url"])
            threads = [threading.Thread(target=client.put_item,
                                        kwargs={"TableName": "t", "Item": {"pk": {"S": "1"}}})
                       for _ in range(2)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(10)
            return "ok"
    """
    run = run_function(source, env=DEBUG, event={"url": server.url})
    reasons = sorted(line.split("(")[1].split(")")[0] for line in run.layer_lines if "new connection" in line)
    assert reasons == ["first use", "pool full"], run.stderr


def test_no_debug_lines_by_default(run_function, server):
    """Debug off: nothing at all is written for a healthy function."""
    run = run_function(TWO_CLIENT_CALLS, env=ON, event={"url": server.url})
    assert run.returncode == 0 and run.stderr == "", run


def test_json_lines_when_lambda_log_format_is_json(run_function, server):
    """AWS_LAMBDA_LOG_FORMAT=JSON: every line is a JSON object with timestamp/level/message/logger."""
    env = dict(DEBUG, AWS_LAMBDA_LOG_FORMAT="JSON", AWS_PYTHON_KEEPALIVE_IDLE="abc")
    run = run_function(TWO_CLIENT_CALLS, env=env, event={"url": server.url})
    assert run.returncode == 0, run
    records = [json.loads(line) for line in run.stderr.splitlines()]
    assert len(records) >= 4
    for record in records:
        assert record["logger"] == "aws_keepalive"
        assert record["level"] in ("WARN", "DEBUG")
        assert record["timestamp"].endswith("Z") and record["message"]
    assert records[0]["level"] == "WARN" and "AWS_PYTHON_KEEPALIVE_IDLE" in records[0]["message"]
    connection = [r for r in records if r.get("reason") == "first use"]
    assert connection and connection[0]["host"] == "127.0.0.1" and connection[0]["connect_ms"] >= 0


def test_never_prints_credentials_headers_or_bodies(run_function, server):
    """Debug output holds no secret key, token, signature header or request body."""
    run = run_function(TWO_CLIENT_CALLS, env=DEBUG, event={"url": server.url})
    assert run.layer_lines
    for forbidden in ("test-secret-never-printed", "test-token-never-printed", "AKIDTESTKEEPALIVE",
                      "Authorization", "secret-item-value", "X-Amz-"):
        assert forbidden not in run.stderr


def test_report_once(capsys):
    """report_once writes a problem the first time only."""
    diagnostics.report_once("key", "first")
    diagnostics.report_once("key", "second")
    diagnostics.report_once("other", "third")
    assert capsys.readouterr().err == "aws-keepalive: WARN first\naws-keepalive: WARN third\n"


def test_reported_keys_bounded(capsys):
    """Keys that name hosts (a stale reuse per host) cannot grow the set for ever: after
    MAX_REPORTED distinct keys one line says so, and nothing more is kept or written."""
    for n in range(diagnostics.MAX_REPORTED + 500):
        diagnostics.report_once("stale reuse host-%d" % n, "host-%d" % n, open_set=True)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == diagnostics.MAX_REPORTED + 1 and "further new ones are not" in lines[-1]
    assert len(diagnostics._reported) == diagnostics.MAX_REPORTED + 1


def test_a_failure_is_reported_after_the_host_keys_filled_the_set(capsys):
    """The cap is for keys of an open set: once a long-lived process has reported stale reuses on
    MAX_REPORTED hosts, a failure of the layer's own (a fixed key) still gets its one line."""
    for n in range(diagnostics.MAX_REPORTED + 5):
        diagnostics.report_once("stale reuse host-%d" % n, "host-%d" % n, open_set=True)
    capsys.readouterr()
    assert diagnostics.report_once("trust once load", "could not load the CA bundle once")
    assert not diagnostics.report_once("trust once load", "again")
    assert capsys.readouterr().err == "aws-keepalive: WARN could not load the CA bundle once\n"


def test_debug_silent_unless_enabled(capsys):
    """debug() writes only when debug is enabled."""
    diagnostics.debug("hidden")
    diagnostics.debug_enabled = True
    diagnostics.debug("shown")
    assert capsys.readouterr().err == "aws-keepalive: DEBUG shown\n"
