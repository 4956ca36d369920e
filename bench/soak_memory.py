"""Memory and file descriptors of one long-lived process, stock botocore vs the layer, side by side.

A Managed Instances worker lives for days: every map the layer keeps must stay bounded.  This soak
runs, in one process per side (switch off = stock, switch on = layer; the two run at the same
time), the shapes that grew a map before (issue 21):

* ``--clients`` botocore client creations (10 000 by default), one in five making two HTTPS calls
  to a loopback TLS server (the second reuses the connection, which the learned-idle table notes);
* ``--hosts`` distinct endpoint hosts (2 000 by default: loopback aliases 127.1.x.y, an
  ``endpoint_url`` each; the certificate names them all), as S3 virtual-hosted bucket names do;
* the CA bundle (botocore's 126 CAs plus the test CA) rewritten in place every
  ``--rewrite-every`` clients (same path and inode, new mtime): each rewrite is a new bundle for
  anything keyed by the file's identity;
* an aiobotocore client every ``--aio-every`` clients (from the test aio folder aioboto3-15.5.0,
  which brings its own boto3/botocore: the sync clients use that botocore too), with one call;
* a raw ``os.fork`` every ``--fork-every`` clients, whose child makes a client and a call.

At ``--checkpoints`` points it collects garbage and reads RSS (``/proc/self/status`` VmRSS) and the
number of open file descriptors, and on the layer's side the size of each of its maps.  The
parent prints the two sides' checkpoints in one table and writes them to build/soak_memory.json
(``--json``).  Growth is measured from the first checkpoint (imports done, first connections
made) to the last.

The hosts need a network of their own: the parent re-runs itself under ``unshare --net`` (root)
with the loopback interface up, where the TLS server listens on 0.0.0.0 -- every 127.x.y.z
reaches it, and nothing outside the namespace can.
"""

import argparse
import gc
import json
import os
import subprocess
import sys
import threading

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYER = os.path.join(REPO, "layer")
AIO_NAME = "aioboto3-15.5.0"
# --small-caps: the caps the layer's side runs with (its module constants, set after activation).
SMALL_CAPS = {"idle._hosts": 100, "diagnostics._reported": 51}


def host_names(count):
    """127.1.0.1, 127.1.0.2, ...: ``count`` loopback aliases."""
    return ["127.1.%d.%d" % (1 + n // 250, 1 + n % 250) for n in range(count)]


# --- the server (parent) --------------------------------------------------------------------------


def start_tls_server(folder, hosts):
    """A DynamoDB-shaped HTTPS server on 0.0.0.0 (in the private namespace) for every host; returns
    (port, bundle path)."""
    import ssl

    import trustme

    sys.path.insert(0, os.path.join(REPO, "tests", "hook"))
    from ddb_server import DynamoDBShapedServer

    authority = trustme.CA()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    authority.issue_cert(*hosts).configure_cert(context)
    # A bundle of realistic size: botocore's own (126 CAs, which is what a loaded context costs
    # memory for) with the test CA appended.
    import importlib.util

    spec = importlib.util.find_spec("botocore")
    bundle = os.path.join(folder, "bundle.pem")
    with open(bundle, "wb") as out:
        if spec is not None:
            with open(os.path.join(os.path.dirname(spec.origin), "cacert.pem"), "rb") as sdk:
                out.write(sdk.read())
        out.write(authority.cert_pem.bytes())

    class AnyAddress(DynamoDBShapedServer):
        def server_bind(self):
            self.server_address = ("0.0.0.0", 0)
            super().server_bind()

    server = AnyAddress(tls_context=context)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1], bundle


# --- the worker (one per side) --------------------------------------------------------------------


def rss_kb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def open_fds():
    return len(os.listdir("/proc/self/fd"))


def layer_maps():
    """The size of every map the layer keeps (modules not loaded count as absent)."""
    sizes = {}
    for module_name, attribute in (("aws_keepalive.idle", "_hosts"),
                                   ("aws_keepalive.diagnostics", "_reported"),
                                   ("aws_keepalive.trust", "_known")):
        module = sys.modules.get(module_name)
        if module is not None and hasattr(module, attribute):
            sizes[module_name.split(".")[1] + "." + attribute] = len(getattr(module, attribute))
    return sizes


def work(args):
    """The soak loop in this process; one JSON line per checkpoint on stdout."""
    if args.switch == "1":
        import aws_keepalive

        aws_keepalive.activate("pth")
        if args.small_caps:
            # The short run (tests/lab/test_soak_memory.py) reaches the caps with few hosts.
            from aws_keepalive import aio, diagnostics, idle

            idle.MAX_HOSTS, diagnostics.MAX_REPORTED = SMALL_CAPS["idle._hosts"], 50
            aio._ConnectorState.MAX_KEYS = 100
    import asyncio

    import boto3
    from aiobotocore.session import get_session
    from botocore.config import Config

    hosts = host_names(args.hosts)
    config = Config(retries={"max_attempts": 1}, connect_timeout=5, read_timeout=5)
    checkpoint_every = max(1, args.clients // args.checkpoints)
    aio_clients = forks = 0

    def url(n):
        # Five clients in a row share a host, and the one of them that calls reaches a new host:
        # every host is called over 5 x hosts clients.
        return "https://%s:%d" % (hosts[(n // 5) % len(hosts)], args.port)

    def call(client, times=1):
        for _ in range(times):
            client.put_item(TableName="t", Item={"pk": {"S": "1"}})

    async def aio_call(n):
        async with get_session().create_client("dynamodb", region_name="us-east-1",
                                               endpoint_url=url(n), verify=args.bundle) as client:
            await client.put_item(TableName="t", Item={"pk": {"S": "1"}})

    loop = asyncio.new_event_loop()
    for n in range(1, args.clients + 1):
        client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=url(n),
                              verify=args.bundle, config=config)
        if n % 5 == 0:
            call(client, 2)  # the second call reuses the connection: the host's idle evidence
        del client
        if n % args.rewrite_every == 0:
            with open(args.bundle) as bundle:
                pem = bundle.read()
            with open(args.bundle, "w") as bundle:  # in place: same inode, new mtime
                bundle.write(pem)
        if n % args.aio_every == 0:
            loop.run_until_complete(aio_call(n))
            aio_clients += 1
        if n % args.fork_every == 0:
            pid = os.fork()
            if pid == 0:
                try:
                    call(boto3.client("dynamodb", region_name="us-east-1", endpoint_url=url(n),
                                      verify=args.bundle, config=config))
                except BaseException:
                    os._exit(1)
                os._exit(0)
            _, status = os.waitpid(pid, 0)
            if os.waitstatus_to_exitcode(status) != 0:
                raise SystemExit("forked child failed")
            forks += 1
        if n % checkpoint_every == 0:
            gc.collect()
            print(json.dumps({"clients": n, "rss_kb": rss_kb(), "fds": open_fds(),
                              "aio_clients": aio_clients, "forks": forks, "maps": layer_maps()}),
                  flush=True)
    loop.close()


# --- the parent -----------------------------------------------------------------------------------


def run_sides(args):
    """Start both sides at once, collect their checkpoints; returns {side: [checkpoint, ...]}."""
    import tempfile

    minor = "%d.%d" % sys.version_info[:2]
    aio_folder = os.path.join(REPO, ".venv", "aio", minor, AIO_NAME)
    if not os.path.isdir(aio_folder):
        raise SystemExit("%s missing: `make test-hook-%s` installs it" % (aio_folder, minor))
    hosts = host_names(args.hosts)
    with tempfile.TemporaryDirectory() as folder:
        port, bundle = start_tls_server(folder, hosts)
        sides = {}
        # --gc-init: a third side, the layer with AWS_PYTHON_KEEPALIVE_GC_INIT=1 (gcinit.py: the init's
        # objects frozen at the first client), run beside the other two.
        for side, switch in (("stock", "0"), ("layer", "1")) + ((("layer_gc_init", "1"),) if args.gc_init else ()):
            side_bundle = os.path.join(folder, side + ".pem")  # each side rewrites its own
            with open(bundle) as source, open(side_bundle, "w") as copy:
                copy.write(source.read())
            env = dict(os.environ, AWS_PYTHON_KEEPALIVE=switch, PYTHONPATH=os.pathsep.join(
                [aio_folder, LAYER]), AWS_ACCESS_KEY_ID="AKIDSOAK", AWS_SECRET_ACCESS_KEY="soak",
                AWS_CONFIG_FILE=os.devnull, AWS_SHARED_CREDENTIALS_FILE=os.devnull,
                AWS_PYTHON_KEEPALIVE_GC_INIT="1" if side == "layer_gc_init" else "0")
            for name in ("AWS_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "AWS_PROFILE"):
                env.pop(name, None)
            command = [sys.executable, os.path.abspath(__file__), "--worker", "--switch", switch,
                       "--port", str(port), "--bundle", side_bundle] + args.passed
            sides[side] = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)
        results = {}
        for side, process in sides.items():
            out, _ = process.communicate(timeout=args.timeout)
            if process.returncode != 0:
                raise SystemExit("%s side failed (exit %s)" % (side, process.returncode))
            results[side] = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        return results


def growth(points, field):
    first, last = points[0][field], points[-1][field]
    return round(100.0 * (last - first) / first, 1)


def report(args, results):
    sides = list(results)
    print("clients  " + "  ".join("%s RSS MiB" % side for side in sides) + "  " +
          "  ".join("%s fds" % side for side in sides) + "  layer maps")
    for points in zip(*(results[side] for side in sides)):
        print("%7d  %s  %s  %s" % (
            points[0]["clients"],
            "  ".join("%*.1f" % (len(side) + 8, p["rss_kb"] / 1024.0) for side, p in zip(sides, points)),
            "  ".join("%*d" % (len(side) + 4, p["fds"]) for side, p in zip(sides, points)),
            " ".join("%s=%d" % item for item in sorted(points[1]["maps"].items()))))
    rows = []
    for side, points in results.items():
        rows.append({"side": side, "clients": points[-1]["clients"], "hosts": args.hosts,
                     "aio_clients": points[-1]["aio_clients"], "forks": points[-1]["forks"],
                     "rss_first_kb": points[0]["rss_kb"], "rss_last_kb": points[-1]["rss_kb"],
                     "rss_growth_pct": growth(points, "rss_kb"), "fds_first": points[0]["fds"],
                     "fds_last": points[-1]["fds"], "fds_max": max(p["fds"] for p in points),
                     "maps_max": {name: max(p["maps"].get(name, 0) for p in points)
                                  for name in points[-1]["maps"]},
                     "checkpoints": points})
    for row in rows:
        print("%s: RSS %+.1f %% (%d -> %d KiB), fds %d -> %d" % (
            row["side"], row["rss_growth_pct"], row["rss_first_kb"], row["rss_last_kb"],
            row["fds_first"], row["fds_last"]))
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from rows import write_rows

    write_rows(args.json, rows, python=sys.version.split()[0], machine=os.uname().machine)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=10000)
    parser.add_argument("--hosts", type=int, default=2000)
    parser.add_argument("--rewrite-every", type=int, default=10)
    parser.add_argument("--aio-every", type=int, default=20)
    parser.add_argument("--fork-every", type=int, default=100)
    parser.add_argument("--checkpoints", type=int, default=10)
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--json", default=os.path.join(os.environ.get("BUILD_DIR", "build"),
                                                       "soak_memory.json"))
    parser.add_argument("--small-caps", action="store_true",
                        help="run the layer with small map caps (SMALL_CAPS), for a short run")
    parser.add_argument("--gc-init", action="store_true",
                        help="a third side: the layer with AWS_PYTHON_KEEPALIVE_GC_INIT=1 (gcinit.py)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--in-netns", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--switch", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--bundle", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.passed = ["--clients", str(args.clients), "--hosts", str(args.hosts),
                   "--rewrite-every", str(args.rewrite_every), "--aio-every", str(args.aio_every),
                   "--fork-every", str(args.fork_every), "--checkpoints", str(args.checkpoints)]
    if args.small_caps:
        args.passed.append("--small-caps")
    if args.worker:
        return work(args)
    if not args.in_netns:
        # A network namespace of its own (root): lo up, then this script again inside it.
        command = [sys.executable, os.path.abspath(__file__), "--in-netns", "--json",
                   os.path.abspath(args.json), "--timeout", str(args.timeout)] + args.passed
        command += ["--gc-init"] if args.gc_init else []
        inner = "ip link set lo up && exec " + " ".join("'%s'" % part for part in command)
        return subprocess.run(["unshare", "--net", "sh", "-c", inner]).returncode
    report(args, run_sides(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
