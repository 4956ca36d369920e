"""End-to-end behind OpenTelemetry: the function started through AWS_LAMBDA_EXEC_WRAPPER=/opt/otel-instrument
with the real OpenTelemetry packages in /opt/python beside the layer (lab/experiments/otel/layer.py), the way
the OpenTelemetry Lambda layer / ADOT start it. What the kernel says about the function's pooled
socket (``ss -tnop``: the keep-alive timer) is the evidence, plus the botocore instrumentation's
spans on stdout.

The layer here is the repo's layer/ folder plus the ``*.dist-info`` the built layer carries (its
entry_points.txt names ``aws_keepalive:opentelemetry_pre_instrument``), written by the same
tools/packaging/build_wheel.write_dist_info the layer build calls.
"""

import glob
import os

from lab.experiments.otel import layer as otel_layer
from lab.standin.lambda_env import (LambdaFunction, extract_layer, hook_lines, keepalive_timers, layer_from_source,
                            timer_seconds)
from standin import LAYER_ZIP, endpoint_fixture, write_task  # noqa: F401

ON_DEBUG = {"AWS_PYTHON_KEEPALIVE": "1", "AWS_PYTHON_KEEPALIVE_DEBUG": "1"}
BEHIND_OTEL = {"AWS_LAMBDA_EXEC_WRAPPER": otel_layer.EXEC_WRAPPER}

# Module-level client (the common shape); the handler flushes spans at the end as OTel's Lambda
# instrumentation does after each invocation, so they reach stdout before the freeze.
HANDLER = """
    import boto3

    client = boto3.client("dynamodb")

    def handler(event, context):
        client.put_item(TableName="table", Item={"pk": {"S": "1"}})
        from opentelemetry import trace
        trace.get_tracer_provider().force_flush()
        import botocore
        return {"botocore": botocore.__version__}
"""


def _opt(root, entry_point=True):
    return otel_layer.add_to(layer_from_source(root, dist_info=entry_point))


def _timers_s(pid, port):
    """Keep-alive timers (seconds) of the process's established connections to the port; None = no timer."""
    return [None if timer is None else timer_seconds(timer) for timer in keepalive_timers(pid, port)]


def _run(tmp_path, endpoint, env, entry_point=True, opt=None):
    task = write_task(tmp_path / "task", fn=HANDLER)
    opt = opt or _opt(tmp_path / "opt", entry_point)
    env = dict(env, AWS_ENDPOINT_URL_DYNAMODB=endpoint.url, **BEHIND_OTEL)
    with LambdaFunction(task, "fn.handler", opt=opt, env=env) as fn:
        init = [line.text for line in fn.init_lines]
        record = fn.invoke({})
        timers = _timers_s(fn.proc.pid, endpoint.server_address[1])
    print("\n".join(hook_lines(init) + record.hook_lines() + ["timers: %s" % timers]))
    assert record.ok, (record.outcome, init, record.stderr)
    spans = [line for line in record.stdout if '"name": "DynamoDB.PutItem"' in line]
    assert spans, record.stdout  # the botocore instrumentation is active in every case
    return hook_lines(init), timers


def test_behind_otel_the_entry_point_activates(tmp_path, endpoint):
    """Layer on behind opentelemetry-instrument: activated "via opentelemetry" before the
    instrumentors; the pooled socket's keep-alive timer is the layer's 60 s, not the kernel's 2 h."""
    lines, timers = _run(tmp_path, endpoint, ON_DEBUG)
    # The wrapper's own interpreter (opentelemetry-instrument) also runs our usercustomize, then
    # execs the runtime: its line comes first, and it changes nothing the function inherits.
    assert [line for line in lines if "on (via opentelemetry)" in line], lines
    assert not [line for line in lines if "WARN" in line], lines
    assert len(timers) == 1 and timers[0] is not None and timers[0] <= 60, timers


def test_behind_otel_usercustomize_alone_still_activates(tmp_path, endpoint):
    """Without the entry point (no dist-info), usercustomize activates after OTel's sitecustomize,
    still before the handler module creates its client: the 60 s timer."""
    lines, timers = _run(tmp_path, endpoint, ON_DEBUG, entry_point=False)
    assert [line for line in lines if "on (via usercustomize)" in line], lines
    assert len(timers) == 1 and timers[0] is not None and timers[0] <= 60, timers


def test_behind_otel_switch_off_is_stock(tmp_path, endpoint):
    """Switch unset behind the wrapper: stock sockets (no SO_KEEPALIVE, so no timer), no hook line."""
    lines, timers = _run(tmp_path, endpoint, {"AWS_PYTHON_KEEPALIVE_DEBUG": "1"})
    assert lines == [] and timers == [None], (lines, timers)


def test_behind_otel_the_built_zip_activates(tmp_path, endpoint):
    """The zip as shipped (its own dist-info and entry point, its botocore) beside the OTel layer:
    activated "via opentelemetry", the 60 s timer."""
    assert os.path.exists(LAYER_ZIP), "build/layer.zip missing (make test-lab builds it)"
    opt = extract_layer(LAYER_ZIP, tmp_path / "opt")
    assert glob.glob(str(opt / "python" / "aws_python_keepalive-*.dist-info" / "entry_points.txt")), \
        "build/layer.zip carries no aws_python_keepalive dist-info"
    lines, timers = _run(tmp_path, endpoint, ON_DEBUG, opt=otel_layer.add_to(opt))
    assert [line for line in lines if "on (via opentelemetry)" in line], lines
    assert len(timers) == 1 and timers[0] is not None and timers[0] <= 60, timers
