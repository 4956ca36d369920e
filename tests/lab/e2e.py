"""Shared pieces of the end-to-end tests (test_e2e_*.py): the built layer, DynamoDB Local over TLS
with a table, one NAT namespace + Netem per function, probe handlers, running things side by side.

Fixtures are imported by the test modules that use them (``from e2e import dynamodb_fixture``), so
the shared conftest.py stays untouched.
"""

import os
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from standin import LAYER_ZIP, REPO, require_root_namespaces, write_task

EXAMPLE = Path(REPO) / "examples" / "put_item"
TABLE = "lab-e2e"

# The NAT forgets a flow after NAT_TIMEOUT s of silence (the scaled-down 350 s); every gap is
# GAP s, comfortably longer. The layer's timers are scaled to match (lab.standin.function_net.scaled_timers
# gives IDLE=1, INTERVAL=1, COUNT=3, MAX_IDLE=2 for 3 s): probes every second keep the flow, and
# MAX_IDLE is just under the NAT timeout.
NAT_TIMEOUT = 3
GAP = 4.5

# A probe function for the silent-drop variant: botocore reads no read_timeout from the environment
# or a config file (only connect_timeout, through defaults_mode), so a stale connection behind a
# silent NAT would hang for the default 60 s. A handler with Config(read_timeout=2) keeps the test
# fast; both sides of the comparison use it, so the layer is the only difference.
SHORT_TIMEOUT_HANDLER = """
    import os
    import boto3
    from botocore.config import Config

    client = boto3.client("dynamodb", config=Config(read_timeout=2, connect_timeout=2))

    def handler(event, context):
        client.put_item(TableName=os.environ["TABLE_NAME"], Item={"pk": {"S": "drop"}})
        return {"ok": True}
"""

# A probe function that reports the options of its own pooled sockets (getsockopt, read back from
# the kernel), found among live objects: no private botocore attribute is needed.
SOCKOPT_HANDLER = """
    import gc, os, socket
    import boto3

    client = boto3.client("dynamodb")
    PORT = int(os.environ["AWS_ENDPOINT_URL_DYNAMODB"].rsplit(":", 1)[1])

    def _options(sock):
        get = lambda level, name: sock.getsockopt(level, name)
        return {"SO_KEEPALIVE": get(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
                "TCP_KEEPIDLE": get(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
                "TCP_KEEPINTVL": get(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL),
                "TCP_KEEPCNT": get(socket.IPPROTO_TCP, socket.TCP_KEEPCNT)}

    def handler(event, context):
        client.put_item(TableName=os.environ["TABLE_NAME"], Item={"pk": {"S": "sockopt"}})
        found = []
        for obj in gc.get_objects():
            if isinstance(obj, socket.socket) and obj.fileno() != -1:
                try:
                    peer = obj.getpeername()
                except OSError:
                    continue
                if peer[1] == PORT:
                    found.append(_options(obj))
        return found
"""


def layer_botocore_version(layer_root):
    """The botocore version the built layer ships (from its dist-info folder)."""
    for entry in os.listdir(os.path.join(str(layer_root), "python")):
        if entry.startswith("botocore-") and entry.endswith(".dist-info"):
            return entry[len("botocore-"):-len(".dist-info")]
    raise AssertionError("the layer at %s ships no botocore" % layer_root)


@pytest.fixture(scope="session", name="built_layer")
def built_layer_fixture(tmp_path_factory):
    """build/layer.zip extracted as /opt (``make test-lab`` builds it first). No fallback to the
    source folder: these tests are about the zip as shipped."""
    from lab.standin.lambda_env import extract_layer

    if not os.path.exists(LAYER_ZIP):
        pytest.fail("%s missing: run `make layer` (make test-lab does)" % LAYER_ZIP)
    return extract_layer(LAYER_ZIP, tmp_path_factory.mktemp("opt"))


@pytest.fixture(scope="session", name="dynamodb")
def dynamodb_fixture():
    """DynamoDB Local behind the TLS front, with the table the example handler writes to."""
    from lab.services.dynamodb import DynamoDBLocal
    from lab.standin.function_net import create_table

    with DynamoDBLocal() as ddb:
        create_table(ddb, TABLE)
        yield ddb


@pytest.fixture(name="networks")
def networks_fixture(dynamodb):
    """``networks(mode, n, nat_timeout=NAT_TIMEOUT)``: n FunctionNetworks, deleted after the test.
    Skipped with the reason printed when no namespace can be made here; in CI (CI=true) a failure."""
    from lab.net import nat
    from lab.standin.function_net import FunctionNetwork

    require_root_namespaces(nat.unavailable_reason())
    made = []

    def make(mode, n, nat_timeout=NAT_TIMEOUT):
        nets = [FunctionNetwork(dynamodb, nat_timeout=nat_timeout, mode=mode) for _ in range(n)]
        for net in nets:
            made.append(net.start())
        return nets

    yield make
    for net in made:
        net.stop()


def direct_env(ddb):
    """The example handler's variables for a function outside any namespace (127.0.0.1)."""
    return {"TABLE_NAME": TABLE, "AWS_ENDPOINT_URL_DYNAMODB": ddb.https_url,
            "AWS_CA_BUNDLE": ddb.ca_bundle_path}


def probe_task(tmp_path, source):
    """A task folder holding ``probe.py`` (handler ``probe.handler``)."""
    return write_task(tmp_path / ("task-" + uuid.uuid4().hex[:8]), probe=source)


def side_by_side(*calls):
    """Run the zero-argument callables at the same time (each in its own namespace, so they do not
    interact); return their results in order, re-raising the first failure."""
    with ThreadPoolExecutor(len(calls), thread_name_prefix="e2e") as pool:
        futures = [pool.submit(call) for call in calls]
        return [f.result() for f in futures]


def lines_with(lines, text):
    return [line for line in lines if text in line]


_print_lock = threading.Lock()


def show(label, records):
    """Print one line per invocation (visible with -s, and in the failure report)."""
    with _print_lock:
        for r in records:
            c = r.counters
            print("%-12s gap=%-5s ok=%s %8.1f ms attempts=%d errors=%d retries=%d new=%d %s" % (
                label, "-" if r.gap_s is None else "%.1f" % r.gap_s, r.ok, r.duration_ms or -1,
                c["attempts"], c["connection_errors"], c["retries"], c["new_connections"],
                " | ".join(r.hook_lines())))
