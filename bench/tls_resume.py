"""make bench-tls-resume: the replacement handshake, full vs resumed (resume.py), at Lambda CPU shares.

One fresh client process per (memory size, TLS version), inside a cgroup CPU quota
(lab/standin/cpu_share.py), against a TLS server here (unthrottled) presenting a real-size chain:
RSA-2048 leaf <- intermediate <- root, the shape AWS endpoints present (Amazon RSA 2048 M0x under
Amazon Root CA 1); the client's bundle holds the root only.  The server closes each connection after
answering, so every call opens a new connection, as a replacement after max idle or a restore does.

Side by side in one process: the layer's connection patch is on, and new connections alternate
between resumption off (``resume.enabled = False``: the full handshake, as stock) and on (the
session of the previous verified connection offered).  Per new connection, the client thread's CPU
(``time.thread_time``) and wall time of ``connect()`` (TCP + TLS to the verdict) are recorded;
medians of CONNECTIONS each.  ``resumed`` counts handshakes the client saw resumed.  Beside them,
what single-use tickets (RFC 8446 C.4) would add: each resumed connection's own new session read
(``SSLSocket.session``) when it first goes back to its pool, the median CPU of that read
(``session_read_cpu_ms``) and (resumed + read) / full (``single_use_cpu_x``); resume.py reuses the
one ticket instead (docs/trust.md).

TLS 1.2: resume.py keeps no TLS 1.2 session (urllib3's contexts ask for no TLS 1.2 session
tickets, OP_NO_TICKET, and close without close_notify, which ends OpenSSL's session-ID resumption
on both sides), so both columns are full handshakes, stock's cost: the row shows it.
Loopback has no RTT, so the wall column is CPU and scheduling, not round trips.
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
CONNECTIONS = int(os.environ.get("CONNECTIONS", "40"))
VERSIONS = ("TLSv1.3", "TLSv1.2")

CHILD = r"""
import json, os, sys, time
sys.path.insert(0, os.environ["LAYER"])
import botocore.session
import botocore.awsrequest
from botocore.config import Config
from aws_keepalive import patch, resume, settings
config = settings.Settings()
resume.enabled = True
patch._patch_connection_pool(config, None, None)
samples = []
connect = botocore.awsrequest.AWSHTTPSConnection.connect
def timed_connect(self, *args, **kwargs):
    cpu, wall = time.thread_time(), time.perf_counter()
    result = connect(self, *args, **kwargs)
    samples.append((time.thread_time() - cpu, time.perf_counter() - wall, self.sock.session_reused))
    return result
botocore.awsrequest.AWSHTTPSConnection.connect = timed_connect
# What single-use tickets would add (docs/trust.md): each resumed connection's own new session read
# when it first goes back to its pool (``SSLSocket.session``: CPython copies it out), timed there.
reads = []
after_release = resume.after_release
def timed_release(conn):
    sock = conn.sock
    if resume.enabled and sock is not None and sock.session_reused:
        cpu = time.thread_time()
        sock.session
        reads.append(time.thread_time() - cpu)
    after_release(conn)
resume.after_release = timed_release
client = botocore.session.get_session().create_client(
    "dynamodb", region_name="us-east-1", endpoint_url=os.environ["URL"], verify=os.environ["BUNDLE"],
    aws_access_key_id="AKIDBENCH", aws_secret_access_key="secret",
    config=Config(retries={"max_attempts": 1}))
for _ in range(3):  # warm up: the first connection, the first resumption
    client.list_tables()
rows = {"full": [], "resumed": [], "session_read": []}
for i in range(2 * int(os.environ["CONNECTIONS"])):
    mode = "resumed" if i % 2 else "full"
    resume.enabled = mode == "resumed"
    del samples[:], reads[:]
    client.list_tables()
    rows[mode].append(samples[0])
    rows["session_read"] += reads
print(json.dumps(rows))
"""


def chain(folder):
    """(server context factory args, root bundle path): RSA-2048 root -> intermediate -> leaf."""
    import trustme

    root = trustme.CA(key_type=trustme.KeyType.RSA)
    intermediate = root.create_child_ca(key_type=trustme.KeyType.RSA)
    leaf = intermediate.issue_cert("localhost", key_type=trustme.KeyType.RSA)
    bundle = os.path.join(folder, "root.pem")
    root.cert_pem.write_to_path(bundle)
    return leaf, bundle


def main():
    from lab.standin import cpu_share
    from ddb_server import DynamoDBShapedServer
    from rows import write_rows

    folder = tempfile.mkdtemp(prefix="bench-tls-resume-")
    leaf, bundle = chain(folder)
    chain_length = len(leaf.cert_chain_pems) + 1  # the leaf and intermediate sent, the root trusted
    rows = []
    for version in VERSIONS:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        leaf.configure_cert(context)
        context.minimum_version = context.maximum_version = getattr(ssl.TLSVersion, version.replace("TLSv1.", "TLSv1_"))
        with DynamoDBShapedServer(tls_context=context, close_after_response=True) as server:
            for memory_mb in MEMORY_MB:
                env = dict(os.environ, LAYER=os.path.join(REPO, "layer"), URL=server.url, BUNDLE=bundle,
                           CONNECTIONS=str(CONNECTIONS))
                done = cpu_share.run([sys.executable, "-c", CHILD], memory_mb, env=env,
                                     capture_output=True, text=True, check=True)
                result = json.loads(done.stdout.splitlines()[-1])
                row = {"tls": version, "memory_mb": memory_mb}
                for mode in ("full", "resumed"):
                    samples = result[mode]
                    row[mode + "_cpu_ms"] = round(statistics.median(s[0] for s in samples) * 1000, 3)
                    row[mode + "_wall_ms"] = round(statistics.median(s[1] for s in samples) * 1000, 2)
                    row[mode + "_resumed"] = sum(1 for s in samples if s[2])
                row["cpu_x"] = round(row["resumed_cpu_ms"] / row["full_cpu_ms"], 2)
                # Single-use tickets: every resumed connection also reads its own new session.
                reads = result["session_read"] or [0.0]
                row["session_read_cpu_ms"] = round(statistics.median(reads) * 1000, 3)
                row["single_use_cpu_x"] = round(
                    (row["resumed_cpu_ms"] + row["session_read_cpu_ms"]) / row["full_cpu_ms"], 2)
                row["wall_x"] = round(row["resumed_wall_ms"] / row["full_wall_ms"], 2)
                rows.append(row)
    print("bench-tls-resume: %s, CPython %s, OpenSSL %s, %d-certificate chain (RSA-2048), median of %d "
          "new connections per cell, full and resumed alternating in one process"
          % (platform.node(), platform.python_version(), ssl.OPENSSL_VERSION, chain_length, CONNECTIONS))
    header = ("tls", "memory_mb", "full_cpu_ms", "resumed_cpu_ms", "cpu_x", "read_cpu_ms", "single_x",
              "full_wall_ms", "resumed_wall_ms", "wall_x", "resumed")
    print("%8s %9s %12s %15s %6s %12s %9s %13s %16s %7s %8s" % header)
    for row in rows:
        print("%8s %9d %12.3f %15.3f %6.2f %12.3f %9.2f %13.2f %16.2f %7.2f %5d/%d" % (
            row["tls"], row["memory_mb"], row["full_cpu_ms"], row["resumed_cpu_ms"], row["cpu_x"],
            row["session_read_cpu_ms"], row["single_use_cpu_x"], row["full_wall_ms"],
            row["resumed_wall_ms"], row["wall_x"], row["resumed_resumed"], CONNECTIONS))
    write_rows(os.path.join(os.environ.get("BUILD_DIR", os.path.join(REPO, "build")), "bench-tls-resume.json"),
               rows, machine=platform.node(), python=platform.python_version(), openssl=ssl.OPENSSL_VERSION,
               chain_certificates=chain_length, connections=CONNECTIONS)


if __name__ == "__main__":
    main()
