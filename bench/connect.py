"""make bench-connect: the cost of one new HTTPS connection, stock botocore vs the layer (trust.py),
at Lambda CPU shares, beside the floor (the same connection verified with a one-certificate bundle).

Each (memory size, configuration) runs in a fresh interpreter inside a cgroup CPU quota
(lab/standin/cpu_share.py). The TLS server (a localhost certificate from a test CA) runs here, unthrottled.
The bundle is the SDK's default (botocore's get_cert_path(True)) plus the test CA, as verify=True
on Lambda with a private CA would be. Medians of many connections; the quota period is 100 ms.

Second table, where a process's first call goes at each share (one process per row, so one
sample: read it beside its neighbours): ``import`` (import botocore.session, plus the layer's
trust patch), ``client`` (session + DynamoDB client: the service model and endpoint rules),
``first call`` (the first list_tables: bundle load + TCP/TLS handshake + botocore's first-call
work + the request), and inside it ``bundle`` (one load_verify_locations of the bundle, timed
alone in the same process afterwards) and ``handshake`` (this row's median new connection with
the one-certificate floor: connect + TLS + request). ``2 more clients``: two more clients of the
same session (as boto3.client() makes them) and one call each: stock loads the bundle for each
new connection, the layer once per client (an unknown bundle) or never (a known one).

Configurations: ``floor`` (the one-certificate bundle, stock), ``stock`` (the full bundle, stock),
``layer`` (the full bundle as one the layer does not know: loaded once per client context) and
``layer-dir`` (the same bundle as one the layer knows, as the SDK's default bundle is in the built
layer: a hashed directory written by tools/packaging/ca_dir.py from it, under a CA root given to trust.py).

Third table, the first HTTPS connection of a fresh process (issue 22's goal: <= 1.2x the floor):
``first_connection_ms`` is the median over FIRST_RUNS fresh processes of the first connection's
TLS: from the send's certificate setup (botocore's ``_setup_ssl_cert``, where trust.py loads a
bundle it does not know) to the end of ``connect()`` (TCP + TLS to the verdict, with the CA
loading urllib3 does there). At 128 MB a process gets 7.2 ms of CPU per 100 ms period: a single
sample moves by up to ~90 ms with where the periods fall, so read medians.
"""

import json
import os
import platform
import ssl
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path[:0] = [REPO, os.path.join(REPO, "tests", "hook"), HERE]

MEMORY_MB = [int(v) for v in os.environ.get("MEMORY_SIZES", "128 512 1769").split()]
CONNECTIONS = int(os.environ.get("CONNECTIONS", "30"))
FIRST_RUNS = int(os.environ.get("FIRST_RUNS", "9"))
CONFIGS = ("floor", "stock", "layer", "layer-dir")

CHILD = r"""
import json, os, ssl, sys, time
start = time.perf_counter()
sys.path.insert(0, os.environ["LAYER"])
import botocore.session
import botocore.awsrequest
import botocore.httpsession
from botocore.config import Config
if os.environ["CONFIG"].startswith("layer"):
    from aws_keepalive import settings, trust
    trust.CA_ROOT = os.environ.get("CA_ROOT", trust.CA_ROOT)
    trust.patch(settings.Settings(), None, None)
imported = time.perf_counter()
# The first connection's TLS, from the send's certificate setup (botocore's _setup_ssl_cert, where
# the layer's trust.py loads a bundle it does not know) to the end of connect() (TCP + TLS to the
# verdict, with the CA loading urllib3 does there): wherever a configuration parses its CAs.
marks = {}
setup = botocore.httpsession.URLLib3Session._setup_ssl_cert
def timed_setup(self, *args, **kwargs):
    marks.setdefault("setup", time.perf_counter())
    return setup(self, *args, **kwargs)
botocore.httpsession.URLLib3Session._setup_ssl_cert = timed_setup
connect = botocore.awsrequest.AWSHTTPSConnection.connect
def timed_connect(self, *args, **kwargs):
    try:
        return connect(self, *args, **kwargs)
    finally:
        marks.setdefault("connected", time.perf_counter())
botocore.awsrequest.AWSHTTPSConnection.connect = timed_connect
session = botocore.session.get_session()
make = lambda: session.create_client(
    "dynamodb", region_name="us-east-1", endpoint_url=os.environ["URL"], verify=os.environ["BUNDLE"],
    aws_access_key_id="AKIDBENCH", aws_secret_access_key="secret",
    config=Config(retries={"max_attempts": 1}))
client = make()
created = time.perf_counter()
client.list_tables()
answered = time.perf_counter()
if os.environ.get("FIRST_ONLY"):
    print(json.dumps({"first_connection_s": marks["connected"] - marks["setup"]}))
    sys.exit(0)
manager = client._endpoint.http_session._manager
times = []
for _ in range(int(os.environ["CONNECTIONS"])):
    manager.clear()
    t = time.perf_counter()
    client.list_tables()
    times.append(time.perf_counter() - t)
t = time.perf_counter()
for _ in range(2):
    make().list_tables()
more_clients_s = time.perf_counter() - t
context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
t = time.perf_counter()
context.load_verify_locations(cafile=os.environ["BUNDLE"])
bundle_s = time.perf_counter() - t
print(json.dumps({"first_call_s": answered - start, "import_s": imported - start,
                  "client_s": created - imported, "call_s": answered - created,
                  "more_clients_s": more_clients_s, "bundle_s": bundle_s, "connection_s": times,
                  "first_connection_s": marks["connected"] - marks["setup"]}))
"""


def main():
    import botocore.httpsession
    from lab.standin import cpu_share
    from lab.standin import trust_store
    import trustme
    sys.path.insert(0, REPO)
    from tools.packaging import ca_dir
    from ddb_server import DynamoDBShapedServer
    from rows import write_rows

    authority = trustme.CA()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    authority.issue_cert("localhost").configure_cert(context)
    folder = tempfile.mkdtemp(prefix="bench-connect-")
    one_cert = os.path.join(folder, "one.pem")
    authority.cert_pem.write_to_path(one_cert)
    sdk_bundle = botocore.httpsession.get_cert_path(True)  # named in the header
    full = trust_store.sdk_bundle_with(one_cert)  # the SDK's bundle + this CA, as the lab's functions get
    certificates = trust_store.certificates(full)
    ca_root = os.path.join(folder, "ca")
    ca_dir.build(full, ca_root)  # what the layer's build does for the SDK's default bundle
    rows = []
    with DynamoDBShapedServer(tls_context=context, close_after_response=True) as server:
        for memory_mb in MEMORY_MB:
            for config in CONFIGS:
                env = dict(os.environ, LAYER=os.path.join(REPO, "layer"), URL=server.url,
                           CONFIG=config, CONNECTIONS=str(CONNECTIONS),
                           BUNDLE=one_cert if config == "floor" else full)
                env.pop("CA_ROOT", None)
                if config == "layer-dir":
                    env["CA_ROOT"] = ca_root  # else layer/aws_keepalive/ca, which the source tree lacks
                done = cpu_share.run([sys.executable, "-c", CHILD], memory_mb, env=env,
                                     capture_output=True, text=True, check=True)
                result = json.loads(done.stdout.splitlines()[-1])
                ms = {key[:-2] + "_ms": round(result[key] * 1000, 1) for key in
                      ("first_call_s", "import_s", "client_s", "call_s", "more_clients_s", "bundle_s")}
                firsts = [result["first_connection_s"]]
                for _ in range(FIRST_RUNS - 1):
                    done = cpu_share.run([sys.executable, "-c", CHILD], memory_mb, env=dict(env, FIRST_ONLY="1"),
                                         capture_output=True, text=True, check=True)
                    firsts.append(json.loads(done.stdout.splitlines()[-1])["first_connection_s"])
                rows.append(dict(ms, memory_mb=memory_mb, config=config,
                                 connection_ms=round(statistics.median(result["connection_s"]) * 1000, 2),
                                 first_connection_ms=round(statistics.median(firsts) * 1000, 1),
                                 first_connection_all_ms=[round(value * 1000, 1) for value in firsts]))
    floor = {r["memory_mb"]: r for r in rows if r["config"] == "floor"}
    for row in rows:
        row["x_floor"] = round(row["connection_ms"] / floor[row["memory_mb"]]["connection_ms"], 2)
        row["first_x_floor"] = round(row["first_connection_ms"] / floor[row["memory_mb"]]["first_connection_ms"], 2)
    print("bench-connect: %s, CPython %s, bundle %d certificates (%s + test CA), median of %d "
          "new connections per row" % (platform.node(), platform.python_version(), certificates,
                                       sdk_bundle, CONNECTIONS))
    print("%9s %9s %14s %8s %14s" % ("memory_mb", "config", "connection_ms", "x_floor", "first_call_ms"))
    for row in rows:
        print("%9d %9s %14.2f %8.2f %14.1f" % (row["memory_mb"], row["config"], row["connection_ms"],
                                               row["x_floor"], row["first_call_ms"]))
    print()
    print("Where a process's first call goes, ms (one process per row; first call = bundle + handshake "
          "+ the rest)")
    print("%9s %9s %8s %8s %11s %8s %10s %16s" % ("memory_mb", "config", "import", "client", "first call",
                                                   "bundle", "handshake", "2 more clients"))
    for row in rows:
        print("%9d %9s %8.1f %8.1f %11.1f %8.1f %10.2f %16.1f" % (
            row["memory_mb"], row["config"], row["import_ms"], row["client_ms"], row["call_ms"],
            row["bundle_ms"], floor[row["memory_mb"]]["connection_ms"], row["more_clients_ms"]))
    print()
    print("The first HTTPS connection of a fresh process (certificate setup to the TLS verdict), median of %d processes"
          % FIRST_RUNS)
    print("%9s %9s %20s %8s  %s" % ("memory_mb", "config", "first_connection_ms", "x_floor", "each process"))
    for row in rows:
        print("%9d %9s %20.1f %8.2f  %s" % (row["memory_mb"], row["config"], row["first_connection_ms"],
                                            row["first_x_floor"], row["first_connection_all_ms"]))
    write_rows(os.path.join(os.environ.get("BUILD_DIR", os.path.join(REPO, "build")),
                            "bench-connect.json"), rows, machine=platform.node(),
               python=platform.python_version(), certificates=certificates)


if __name__ == "__main__":
    main()
