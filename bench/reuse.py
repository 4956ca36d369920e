"""What stale-reuse detection and the learned idle limit cost a request on a reused connection.

    python bench/reuse.py [--json build/bench-reuse.json]     (make bench-reuse)

Two measurements, side by side in one run:

1. The wrappers alone: ``_make_request`` as patch.py wraps it (the reused-connection path: read and
   clear the connection's idle note, try, ``idle.reused_ok``) around an original that does nothing,
   against that original called directly; and ``idle.replace_reason`` with a learned limit for the
   host against none.  timeit, best of 7 x 200 000 calls.
2. End to end: sequential DynamoDB PutItem calls on one reused keep-alive connection to a
   DynamoDB-shaped HTTP server on loopback, stock botocore vs the layer's patches applied, each in a
   fresh interpreter, alternated (3 rounds of 2 000 calls each); median microseconds per call.
"""

import argparse
import os
import statistics
import subprocess
import sys
import timeit

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "layer"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

CALLS = 2000
ROUNDS = 3

# Run in a fresh interpreter: a keep-alive server thread, one client, CALLS PutItems; prints us/call.
END_TO_END = r"""
import http.server, socketserver, sys, threading, time
sys.path.insert(0, %(layer)r)

class Answer(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")
    def log_message(self, *args):
        pass

class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True

server = Server(("127.0.0.1", 0), Answer)
threading.Thread(target=server.serve_forever, daemon=True).start()
if %(layer_on)r:
    from aws_keepalive import patch, settings
    import botocore
    patch.apply(settings.Settings())
import boto3
client = boto3.client("dynamodb", endpoint_url="http://127.0.0.1:%%d" %% server.server_address[1],
                      region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")
for _ in range(50):
    client.put_item(TableName="t", Item={"pk": {"S": "1"}})
started = time.perf_counter()
for _ in range(%(calls)d):
    client.put_item(TableName="t", Item={"pk": {"S": "1"}})
print((time.perf_counter() - started) / %(calls)d * 1e6)
"""


def wrapper_rows():
    from aws_keepalive import idle, patch, settings

    class Conn:
        host, port = "dynamodb.us-east-1.amazonaws.com", 443

    def original(self, conn, *args, **kwargs):
        return None

    wrapped = patch._make_make_request(settings.Settings(), original)
    conn = Conn()
    idle.reused_ok(Conn.host, 10.0)

    def reused_call():
        conn._aws_keepalive_reused_idle_s = 5.0  # what _get_conn notes for a reused connection
        wrapped(None, conn, "POST", "/")

    def stock_call():
        conn._aws_keepalive_reused_idle_s = 5.0  # same attribute write, so only the wrapper differs
        original(None, conn, "POST", "/")

    stamp = idle.stamp()

    def replace_learned():
        idle.replace_reason(stamp, None, 300, "learned.example")

    def replace_plain():
        idle.replace_reason(stamp, None, 300, "plain.example")

    idle.reused_stale("learned.example", 200.0)
    number = 200_000

    def best(fn):
        return min(timeit.repeat(fn, number=number, repeat=7)) / number * 1e6

    return [
        {"measure": "_make_request, reused connection", "stock_us": best(stock_call),
         "layer_us": best(reused_call)},
        {"measure": "replace_reason, host without / with a learned limit",
         "stock_us": best(replace_plain), "layer_us": best(replace_learned)},
    ]


def end_to_end_row():
    results = {False: [], True: []}
    for _ in range(ROUNDS):
        for layer_on in (False, True):
            source = END_TO_END % {"layer": os.path.join(REPO, "layer"), "layer_on": layer_on,
                                   "calls": CALLS}
            out = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                                 timeout=300, env={"PATH": os.environ.get("PATH", ""),
                                                   "AWS_CONFIG_FILE": os.devnull,
                                                   "AWS_SHARED_CREDENTIALS_FILE": os.devnull})
            if out.returncode != 0:
                raise SystemExit(out.stderr)
            results[layer_on].append(float(out.stdout.strip()))
    return {"measure": "PutItem on a reused connection (loopback, end to end)",
            "stock_us": statistics.median(results[False]), "layer_us": statistics.median(results[True]),
            "stock_runs_us": results[False], "layer_runs_us": results[True]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", default=os.path.join(os.environ.get("BUILD_DIR", "build"), "bench-reuse.json"))
    args = parser.parse_args(argv)
    import botocore

    rows = wrapper_rows() + [end_to_end_row()]
    load = os.getloadavg()
    print("CPython %s, botocore %s, %s; load %.2f %.2f %.2f" % (
        sys.version.split()[0], botocore.__version__, os.uname().machine, *load))
    print("%-56s %10s %10s %8s %7s" % ("", "stock us", "layer us", "diff us", "ratio"))
    for row in rows:
        row["diff_us"] = row["layer_us"] - row["stock_us"]
        print("%-56s %10.3f %10.3f %8.3f %7.3f" % (row["measure"], row["stock_us"], row["layer_us"],
                                                  row["diff_us"], row["layer_us"] / row["stock_us"]))
    from rows import write_rows

    write_rows(args.json, rows, python=sys.version.split()[0], botocore=botocore.__version__,
               load=list(load))


if __name__ == "__main__":
    main()
