"""The layer beside the observability stack: each library's spans or segments recorded, read back
from the library's own sink (a UDP listener, stdout, a transport), and the keep-alive timers on the
function's real pooled socket (getsockopt), in the Lambda order: the layer activates first through
its .pth, then the function's code imports and switches on the library.

OpenTelemetry is covered end to end by tests/lab/test_e2e_otel.py (its exec wrapper, its botocore
spans on stdout, the timers read with ``ss``); it is not repeated here.  Nothing leaves loopback:
X-Ray's daemon address is a UDP socket of this test, ddtrace writes traces to stdout (its Lambda
mode without the extension) with telemetry and remote configuration off, datadog-lambda flushes
metrics to the log, sentry gets a transport that keeps envelopes in memory and no DSN.
"""

import json
import socket
import textwrap

import pytest

from conftest import ON

TIMERS = {"SO_KEEPALIVE": 1, "TCP_KEEPIDLE": 60, "TCP_KEEPINTVL": 10, "TCP_KEEPCNT": 3, "TCP_NODELAY": 1}

# The function's client and call, the same for every library; the handler returns the socket
# options of its pooled connection and whatever the library's sink holds (``recorded``).
CLIENT = """
    import os
    import boto3
    import keepalive_probe

    client = boto3.client("dynamodb", endpoint_url=os.environ["ENDPOINT"])

    def put_and_report(recorded=None):
        client.put_item(TableName="table", Item={"pk": {"S": "1"}})
        return {"options": keepalive_probe.client_socket_options(client), "recorded": recorded}
"""


def _function(setup, handler):
    """A handler module: the library's setup (first, as a function imports it), the client, the
    handler."""
    return "\n".join(textwrap.dedent(part) for part in (setup, CLIENT, handler))


def _check_ok(invocation):
    assert invocation.ok, (invocation.result, invocation.init_output[-20:], invocation.stderr[-20:])


def _patched_once(invocation, route="pth"):
    """The layer's debug lines say it activated through ``route`` and patched botocore once."""
    lines = [line for line in invocation.init_output + invocation.stderr if "aws-keepalive" in line]
    assert any("on (via %s)" % route in line for line in lines), lines
    assert len([line for line in lines if "patched botocore" in line]) == 1, lines


@pytest.fixture
def udp_listener():
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(5.0)
    yield sock
    sock.close()


def _documents(sock):
    """X-Ray daemon datagrams: a JSON header line, then one segment or subsegment document."""
    documents = []
    while True:
        try:
            datagram = sock.recv(65536)
        except socket.timeout:
            return documents
        header, _, body = datagram.decode().partition("\n")
        assert json.loads(header) == {"format": "json", "version": 1}
        documents.append(json.loads(body))
        sock.settimeout(0.5)


def _subsegments(document):
    yield document
    for child in document.get("subsegments", []):
        yield from _subsegments(child)


# Lambda's runtime sets _X_AMZN_TRACE_ID per invocation from the Runtime API's header; the
# stand-in's says Sampled=0, active tracing says Sampled=1: the handler sets what Lambda would.
SAMPLED = ("os.environ['_X_AMZN_TRACE_ID'] = "
           "'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1'")


def test_xray_sdk_patch_all(invoke, server, udp_listener):
    """X-Ray SDK patch_all(): the DynamoDB PutItem subsegment reaches the daemon address, and the
    pooled socket has the layer's timers."""
    source = _function("""
        from aws_xray_sdk.core import patch_all, xray_recorder
        patch_all()
    """, """
        def handler(event, context):
            %s
            with xray_recorder.in_subsegment("handler"):
                return put_and_report()
    """ % SAMPLED)
    invocation = invoke(source, env=dict(ON, ENDPOINT=server.url, AWS_XRAY_DAEMON_ADDRESS="127.0.0.1:%d"
                                         % udp_listener.getsockname()[1]))
    _check_ok(invocation)
    assert invocation.result["options"] == [TIMERS]
    calls = [doc for top in _documents(udp_listener) for doc in _subsegments(top)
             if doc.get("aws", {}).get("operation") == "PutItem"]
    assert [(doc["name"], doc["namespace"], doc["aws"]["table_name"]) for doc in calls] == [
        ("dynamodb", "aws", "table")]
    _patched_once(invocation)


def test_powertools_tracer_logger_metrics(invoke, server, udp_listener):
    """Powertools Tracer (the PutItem subsegment under the handler's), Logger (its JSON line) and
    Metrics (its EMF record) all work, and the pooled socket has the layer's timers."""
    source = _function("""
        from aws_lambda_powertools import Logger, Metrics, Tracer
        from aws_lambda_powertools.metrics import MetricUnit
        tracer = Tracer(service="compat")
        logger = Logger(service="compat")
        metrics = Metrics(namespace="Compat", service="compat")
    """, """
        @metrics.log_metrics
        @tracer.capture_lambda_handler
        def traced(event, context):
            logger.info("putting one item")
            metrics.add_metric(name="Puts", unit=MetricUnit.Count, value=1)
            return put_and_report()

        def handler(event, context):
            %s
            return traced(event, context)
    """ % SAMPLED)
    invocation = invoke(source, env=dict(ON, ENDPOINT=server.url, AWS_XRAY_DAEMON_ADDRESS="127.0.0.1:%d"
                                         % udp_listener.getsockname()[1]))
    _check_ok(invocation)
    assert invocation.result["options"] == [TIMERS]
    documents = [doc for top in _documents(udp_listener) for doc in _subsegments(top)]
    handler_ids = [doc["id"] for doc in documents if doc.get("name") == "## traced"]
    # Streamed: the PutItem subsegment is sent on its own, naming the handler's as its parent.
    assert [(doc["aws"]["operation"], doc["parent_id"] in handler_ids) for doc in documents
            if "operation" in doc.get("aws", {})] == [("PutItem", True)], documents
    records = [json.loads(line) for line in invocation.stdout if line.startswith("{")]
    assert [r["message"] for r in records if r.get("service") == "compat" and "message" in r] == [
        "putting one item"]
    emf = [r for r in records if "_aws" in r]
    assert [(r["Puts"], r["_aws"]["CloudWatchMetrics"][0]["Namespace"]) for r in emf] == [([1.0], "Compat")]
    _patched_once(invocation)


# ddtrace in Lambda without Datadog's extension writes each finished trace to stdout (its
# LogWriter): that is the sink read here; nothing else of ddtrace's may reach out.
DDTRACE_ENV = {
    "DD_INSTRUMENTATION_TELEMETRY_ENABLED": "false",
    "DD_REMOTE_CONFIGURATION_ENABLED": "false",
    "DD_TRACE_STARTUP_LOGS": "false",
    "DD_CRASHTRACKING_ENABLED": "false",
}


def _dd_spans(lines):
    """Spans of the traces ddtrace's LogWriter printed (one JSON object per line)."""
    spans = []
    for line in lines:
        if line.startswith('{"traces"'):
            spans += [span for trace in json.loads(line)["traces"] for span in trace]
    return spans


def test_ddtrace_patch(invoke, server):
    """ddtrace.patch(botocore=True) after the layer: the DynamoDB PutItem span is recorded, and the
    pooled socket has the layer's timers."""
    source = _function("""
        import ddtrace
        ddtrace.patch(botocore=True)
        from ddtrace.trace import tracer
    """, """
        def handler(event, context):
            with tracer.trace("handler"):
                result = put_and_report()
            tracer.flush()
            return result
    """)
    invocation = invoke(source, env=dict(ON, ENDPOINT=server.url, **DDTRACE_ENV))
    _check_ok(invocation)
    assert invocation.result["options"] == [TIMERS]
    _check_dd_spans(invocation.stdout)
    _patched_once(invocation)


def _check_dd_spans(stdout):
    spans = {span["name"]: span for span in _dd_spans(stdout)}
    assert set(spans) == {"handler", "dynamodb.command"}, spans
    call = spans["dynamodb.command"]
    assert (call["resource"], call["meta"]["aws.operation"], call["parent_id"]) == (
        "dynamodb.putitem", "PutItem", spans["handler"]["span_id"])


# ddtrace-run as an exec wrapper: the layer's folder and the function's (ddtrace) on PYTHONPATH,
# then ddtrace-run starts the runtime with its bootstrap folder (its own sitecustomize) first.
# With PYTHONPATH set, the runtime adds no site directory, so the .pth route is off: the layer
# activates from its usercustomize, which site imports after ddtrace's sitecustomize has installed
# its import hooks -- the layer's finder is then asked by ddtrace's and asks it back
# (docs/activation.md).
DDTRACE_RUN_WRAPPER = """\
    #!/bin/sh
    export PYTHONPATH="$(dirname "$0")/python:$LAMBDA_TASK_ROOT"
    exec "$1" -m ddtrace.commands.ddtrace_run "$@"
"""


def test_ddtrace_run(invoke, server):
    """ddtrace-run as the exec wrapper: botocore patched once behind ddtrace's import hooks, its
    own loader kept, the PutItem span recorded, the layer's timers on the socket."""
    source = _function("""
        import botocore.session
        from ddtrace.trace import tracer
    """, """
        def handler(event, context):
            with tracer.trace("handler"):
                result = put_and_report()
            tracer.flush()
            result["loader"] = type(botocore.session.__loader__).__name__
            return result
    """)
    invocation = invoke(source, env=dict(ON, ENDPOINT=server.url, **DDTRACE_ENV),
                        exec_wrapper=DDTRACE_RUN_WRAPPER)
    _check_ok(invocation)
    assert invocation.result["options"] == [TIMERS]
    assert invocation.result["loader"] == "SourceFileLoader"
    _check_dd_spans(invocation.stdout)
    _patched_once(invocation, route="usercustomize")


@pytest.mark.parametrize("first", ["ddtrace", "layer"])
def test_ddtrace_import_hooks_either_order(first, tmp_path):
    """ddtrace.patch(botocore=True) before or after the layer activates: botocore is patched once
    and botocore.session keeps botocore's own loader."""
    import subprocess
    import sys

    from conftest import REPO, compat_task

    steps = {"ddtrace": "import ddtrace; ddtrace.patch(botocore=True)\n",
             "layer": "import aws_keepalive; aws_keepalive.activate('test')\n"}
    script = (
        "import sys; sys.path[:0] = [%r, %r]\n" % (str(REPO / "layer"), compat_task())
        + steps[first] + steps["layer" if first == "ddtrace" else "ddtrace"]
        + "import botocore.session\n"
        + "print(type(botocore.session.__loader__).__name__)\n"
    )
    env = dict(ON, PATH="/usr/bin:/bin", HOME=str(tmp_path), **DDTRACE_ENV)
    completed = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                               timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["SourceFileLoader"]
    assert completed.stderr.count("patched botocore") == 1, completed.stderr


def test_sentry_boto3_and_aws_lambda(invoke, server):
    """sentry-sdk with its Boto3 and AwsLambda integrations (no DSN; a transport that prints each
    envelope's transaction): the invocation's transaction holds the DynamoDB PutItem span, and
    the pooled socket has the layer's timers."""
    source = _function("""
        import json
        import sentry_sdk
        from sentry_sdk.integrations.aws_lambda import AwsLambdaIntegration
        from sentry_sdk.integrations.boto3 import Boto3Integration
        from sentry_sdk.transport import Transport

        class PrintTransport(Transport):
            def capture_envelope(self, envelope):
                for item in envelope.items:
                    if item.type == "transaction":
                        print(json.dumps({"sentry_transaction": item.payload.json}))

        sentry_sdk.init(transport=PrintTransport(), traces_sample_rate=1.0,
                        integrations=[AwsLambdaIntegration(), Boto3Integration()])
    """, """
        def handler(event, context):
            return put_and_report()
    """)
    invocation = invoke(source, env=dict(ON, ENDPOINT=server.url))
    _check_ok(invocation)
    assert invocation.result["options"] == [TIMERS]
    (transaction,) = [json.loads(line)["sentry_transaction"] for line in invocation.stdout
                      if line.startswith('{"sentry_transaction"')]
    assert (transaction["transaction"], transaction["contexts"]["trace"]["op"]) == ("lab-function", "function.aws")
    assert [(span["description"], span["parent_span_id"]) for span in transaction["spans"]
            if span["origin"] == "auto.http.boto3"] == [
        ("aws.dynamodb.PutItem", transaction["contexts"]["trace"]["span_id"])]
    _patched_once(invocation)


def test_datadog_lambda_wrapper(invoke, server):
    """datadog-lambda's handler wrapper (no extension: metrics flushed to the log, traces by
    ddtrace's LogWriter to stdout): the aws.lambda span with the PutItem span, the custom metric,
    and the layer's timers on the pooled socket."""
    source = _function("""
        from datadog_lambda.metric import lambda_metric
        from datadog_lambda.wrapper import datadog_lambda_wrapper
    """, """
        @datadog_lambda_wrapper
        def handler(event, context):
            lambda_metric("compat.puts", 1)
            return put_and_report()
    """)
    # DD_MIN_COLD_START_DURATION=0: datadog-lambda records only imports of 3 ms or more by default,
    # and botocore.session's own import (its dependencies come earlier, with ddtrace's patch) takes
    # 3-4 ms here: without it the span below came and went from run to run.
    invocation = invoke(source, env=dict(ON, ENDPOINT=server.url, DD_FLUSH_TO_LOG="true",
                                         DD_MIN_COLD_START_DURATION="0", **DDTRACE_ENV))
    _check_ok(invocation)
    assert invocation.result["options"] == [TIMERS]
    spans = _dd_spans(invocation.stdout)
    (invocation_span,) = [span for span in spans if span["name"] == "aws.lambda"]
    assert [(span["resource"], span["parent_id"]) for span in spans if span["name"] == "dynamodb.command"] == [
        ("dynamodb.putitem", invocation_span["span_id"])]
    # Its cold-start tracing wraps every loader's exec_module too: botocore.session's import is
    # still recorded beside the layer's hook.
    assert "botocore.session" in [span["resource"] for span in spans if span["name"] == "aws.lambda.import"]
    metrics = [json.loads(line) for line in invocation.stdout if line.startswith('{"m"')]
    assert [metric["v"] for metric in metrics if metric["m"] == "compat.puts"] == [1]
    _patched_once(invocation)
