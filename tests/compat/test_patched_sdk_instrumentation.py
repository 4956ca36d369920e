"""Instrumentation libraries on the full layer's patched SDK (layer/patches/: s3transfer,
concurrent.futures.thread, the docs modules, importlib.metadata and dateutil.parser are no longer
imported by `import boto3`).

What such libraries rely on is checked with the real ones: ddtrace (tests/compat/requirements.txt)
patches botocore and, through its ``futures`` integration, ``concurrent.futures.thread`` (the
ThreadPoolExecutor s3transfer's threaded transfers use) by import hooks: a module imported later
than before (here at the first S3 transfer) must still be patched, and a span must still follow a
transfer's threads.  OpenTelemetry's botocore instrumentation (lab/otel-requirements.txt) checks its
dependency with importlib.metadata and wraps BaseClient._make_api_call: its span must be recorded.
Both run in a fresh interpreter with build/layer.zip's python/ first on PYTHONPATH (the patched
SDK), the libraries after it, and call the DynamoDB-shaped server on loopback.
"""

import json
import os
import subprocess
import sys
import textwrap

import pytest
from conftest import REPO, compat_task

from lab.standin.lambda_env import extract_layer

LAYER_ZIP = os.environ.get("AWS_KEEPALIVE_LAYER_ZIP", str(REPO / "build" / "layer.zip"))
COMMON = """
import json, sys
import boto3, boto3.compat
report = {"patched": "TransferConfig" not in vars(boto3.compat),
          "lazy": sorted(name for name in ("s3transfer", "concurrent.futures.thread") if name in sys.modules)}

def put_item(endpoint):
    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=endpoint,
                          aws_access_key_id="a", aws_secret_access_key="b")
    client.put_item(TableName="table", Item={"k": {"S": "v"}})
"""

DDTRACE = COMMON.replace("import json, sys\n", """import json, sys
import ddtrace
ddtrace.patch(botocore=True, futures=True)
from ddtrace.trace import TraceFilter, tracer

class Keep(TraceFilter):
    spans = []
    def process_trace(self, trace):
        self.spans.extend(trace)
        return None  # nothing leaves the process

tracer.configure(trace_processors=[Keep()])
""", 1) + """
with tracer.trace("handler") as parent:
    put_item(sys.argv[1])
    from boto3.s3.transfer import TransferConfig  # the first transfer's import: s3transfer, its threads
    import concurrent.futures.thread as thread
    with thread.ThreadPoolExecutor(max_workers=2) as pool:  # what s3transfer's executor runs on
        active = pool.submit(tracer.context_provider.active).result()
    report["thread context is the parent's"] = getattr(active, "span_id", None) == parent.span_id
tracer.flush()
report["futures patched"] = bool(getattr(thread, "__datadog_patch", False))
report["spans"] = sorted({(span.name, span.get_tag("aws.operation") or "") for span in Keep.spans})
print(json.dumps(report))
"""

OTEL = COMMON.replace("import json, sys\n", """import json, sys
from opentelemetry import trace
from opentelemetry.instrumentation.botocore import BotocoreInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)
""", 1) + """
instrumentor = BotocoreInstrumentor()
report["dependency conflict"] = str(instrumentor._check_dependency_conflicts()
                                    if hasattr(instrumentor, "_check_dependency_conflicts") else None)
instrumentor.instrument()
put_item(sys.argv[1])
report["spans"] = sorted(span.name for span in exporter.get_finished_spans())
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def patched_sdk(tmp_path_factory):
    """build/layer.zip's python/ folder (the patched SDK), extracted."""
    assert os.path.isfile(LAYER_ZIP), "no %s: make test-compat builds it" % LAYER_ZIP
    return str(extract_layer(LAYER_ZIP, tmp_path_factory.mktemp("layer")) / "python")


def run(script, python_path, endpoint):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/root"),
           "PYTHONPATH": python_path, "PYTHONNOUSERSITE": "1", "DD_TRACE_ENABLED": "true",
           "DD_INSTRUMENTATION_TELEMETRY_ENABLED": "false", "DD_REMOTE_CONFIGURATION_ENABLED": "false",
           "OTEL_SDK_DISABLED": "false"}
    completed = subprocess.run([sys.executable, "-c", textwrap.dedent(script), endpoint], capture_output=True,
                               text=True, env=env, timeout=180)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.strip().splitlines()[-1])


def test_ddtrace_on_the_patched_sdk(patched_sdk, server):
    """ddtrace patches the patched SDK's botocore (the PutItem span) and, when the first S3 transfer
    imports concurrent.futures.thread late, patches it then: the span's context follows the threads
    s3transfer's transfers run on."""
    report = run(DDTRACE, os.pathsep.join([patched_sdk, compat_task()]), server.url)
    assert report["patched"] is True and report["lazy"] == []
    assert ["dynamodb.command", "PutItem"] in report["spans"], report["spans"]
    assert report["futures patched"] is True
    assert report["thread context is the parent's"] is True


def test_opentelemetry_botocore_on_the_patched_sdk(patched_sdk, server):
    """OpenTelemetry's botocore instrumentation finds botocore's metadata, instruments the patched
    SDK and records the PutItem span."""
    from lab.experiments.otel import layer as otel_layer

    otel = str(otel_layer.packages("3.12") / "python")
    report = run(OTEL, os.pathsep.join([patched_sdk, otel]), server.url)
    assert report["patched"] is True  # (OTel's SDK imports concurrent.futures itself)
    assert report["dependency conflict"] in ("None", "")
    assert report["spans"] == ["DynamoDB.PutItem"], report["spans"]

