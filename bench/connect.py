"""make bench-connect: the cost of one new HTTPS connection, stock botocore vs the layer (trust.py),
at Lambda CPU shares, beside the floor (the same connection verified with a one-certificate bundle).

Each (memory size, configuration) runs in a fresh interpreter inside a cgroup CPU quota
(lab/cpu_share.py). The TLS server (a localhost certificate from a test CA) runs here, unthrottled.
The bundle is the SDK's default (botocore's get_cert_path(True)) plus the test CA, as verify=True
on Lambda with a private CA would be. Medians of many connections; the quota period is 100 ms.
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
CONFIGS = ("floor", "stock", "layer")

CHILD = r"""
import json, os, sys, time
start = time.perf_counter()
sys.path.insert(0, os.environ["LAYER"])
import botocore.session
from botocore.config import Config
if os.environ["CONFIG"] == "layer":
    from aws_keepalive import settings, trust
    trust.patch(settings.Settings(), None, None)
client = botocore.session.get_session().create_client(
    "dynamodb", region_name="us-east-1", endpoint_url=os.environ["URL"], verify=os.environ["BUNDLE"],
    aws_access_key_id="AKIDBENCH", aws_secret_access_key="secret",
    config=Config(retries={"max_attempts": 1}))
client.list_tables()
first_call_s = time.perf_counter() - start
manager = client._endpoint.http_session._manager
times = []
for _ in range(int(os.environ["CONNECTIONS"])):
    manager.clear()
    t = time.perf_counter()
    client.list_tables()
    times.append(time.perf_counter() - t)
print(json.dumps({"first_call_s": first_call_s, "connection_s": times}))
"""


def main():
    import botocore.httpsession
    from lab import cpu_share
    import trustme
    from ddb_server import DynamoDBShapedServer
    from rows import write_rows

    authority = trustme.CA()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    authority.issue_cert("localhost").configure_cert(context)
    folder = tempfile.mkdtemp(prefix="bench-connect-")
    one_cert = os.path.join(folder, "one.pem")
    authority.cert_pem.write_to_path(one_cert)
    sdk_bundle = botocore.httpsession.get_cert_path(True)
    full = os.path.join(folder, "full.pem")
    with open(full, "wb") as out, open(sdk_bundle, "rb") as sdk:
        out.write(sdk.read() + b"\n" + authority.cert_pem.bytes())
    certificates = open(full).read().count("BEGIN CERTIFICATE")
    rows = []
    with DynamoDBShapedServer(tls_context=context, close_after_response=True) as server:
        for memory_mb in MEMORY_MB:
            for config in CONFIGS:
                env = dict(os.environ, LAYER=os.path.join(REPO, "layer"), URL=server.url,
                           CONFIG=config, CONNECTIONS=str(CONNECTIONS),
                           BUNDLE=one_cert if config == "floor" else full)
                done = cpu_share.run([sys.executable, "-c", CHILD], memory_mb, env=env,
                                     capture_output=True, text=True, check=True)
                result = json.loads(done.stdout.splitlines()[-1])
                rows.append({"memory_mb": memory_mb, "config": config,
                             "connection_ms": round(statistics.median(result["connection_s"]) * 1000, 2),
                             "first_call_ms": round(result["first_call_s"] * 1000, 1)})
    floor = {r["memory_mb"]: r["connection_ms"] for r in rows if r["config"] == "floor"}
    for row in rows:
        row["x_floor"] = round(row["connection_ms"] / floor[row["memory_mb"]], 2)
    print("bench-connect: %s, CPython %s, bundle %d certificates (%s + test CA), median of %d "
          "new connections per row" % (platform.node(), platform.python_version(), certificates,
                                       sdk_bundle, CONNECTIONS))
    print("%9s %6s %14s %8s %14s" % ("memory_mb", "config", "connection_ms", "x_floor", "first_call_ms"))
    for row in rows:
        print("%9d %6s %14.2f %8.2f %14.1f" % (row["memory_mb"], row["config"], row["connection_ms"],
                                               row["x_floor"], row["first_call_ms"]))
    write_rows(os.path.join(os.environ.get("BUILD_DIR", os.path.join(REPO, "build")),
                            "bench-connect.json"), rows, machine=platform.node(),
               python=platform.python_version(), certificates=certificates)


if __name__ == "__main__":
    main()
