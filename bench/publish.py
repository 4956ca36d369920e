"""How long `make publish` takes for every region x both flavors, against a local moto server.

    python bench/publish.py --moto .venv/moto/bin/moto_server --release build/release --version 0.1.0
    (make bench-publish)

Starts moto on a free loopback port (stopped by pid at the end), then publishes both release zips
into every region of tools/release/regions.json's aws partition, public, twice in one process: the first
run publishes every (region, layer), the second must publish nothing (the idempotency check on
CodeSha256) yet still ensures each permission and SSM parameter.  Prints the table and writes the
rows as JSON.  moto answers each call on loopback, so these are the tool's own costs (reading the
zips once, the parallel requests, base64 of ~24 MB per full-layer upload) plus moto's, not AWS's:
a real run adds the network and Lambda's own publish time per region.
"""

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
from tools.packaging import layer_info  # noqa: E402
from tools.release import publish  # noqa: E402
from tools.release import regions  # noqa: E402


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_moto(moto, port, log):
    process = subprocess.Popen([moto, "-H", "127.0.0.1", "-p", str(port)], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("bench/publish: moto did not start")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moto", required=True, help="moto_server executable")
    parser.add_argument("--release", required=True, help="the release folder (make release)")
    parser.add_argument("--version", required=True, help="the release version in the zip names")
    parser.add_argument("--json", default=os.path.join("build", "bench-publish.json"))
    parser.add_argument("--jobs", type=int, default=16)
    args = parser.parse_args(argv)
    port = free_port()
    os.environ.update(AWS_ENDPOINT_URL="http://127.0.0.1:%d" % port, AWS_ACCESS_KEY_ID="bench",
                      AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1",
                      AWS_CONFIG_FILE=os.devnull, AWS_SHARED_CREDENTIALS_FILE=os.devnull)
    layers = publish.parse_layers([
        "%s=%s" % (layer_info.NAME, os.path.join(args.release, "%s-%s.zip" % (layer_info.NAME, args.version))),
        "%s=%s" % (layer_info.HOOK_NAME, os.path.join(args.release, "%s-%s.zip" % (layer_info.HOOK_NAME,
                                                                                    args.version))),
    ])
    names = regions.load(regions.REGIONS_FILE, "aws")
    options = {"public": True, "organization": "", "ssm_prefix": publish.SSM_PREFIX, "partition": "aws",
               "signing": None}
    rows = []
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(os.path.join(os.path.dirname(os.path.abspath(args.json)), "bench-publish-moto.log"), "w") as log:
        moto = start_moto(args.moto, port, log)
        try:
            for run in ("first", "again"):
                started = time.monotonic()
                outcome = publish.run(layers, names, options, jobs=args.jobs, stream=open(os.devnull, "w"))
                seconds = time.monotonic() - started
                statuses = [status for state, results in outcome.values() if state == "done"
                            for _, status, _ in results]
                rows.append({"run": run, "regions": len(names), "layers": len(layers), "seconds": round(seconds, 1),
                             "published": statuses.count("published"), "unchanged": statuses.count("unchanged"),
                             "failed": sum(1 for state, _ in outcome.values() if state != "done")})
        finally:
            moto.terminate()
            moto.wait(timeout=30)
    print("publish to a local moto server: %d regions x %d layers (%s), %d at once; %s, CPython %s"
          % (len(names), len(layers), ", ".join("%s %.1f MB" % (layer.name, len(layer.data) / 1e6) for layer in layers),
             args.jobs, platform.machine(), platform.python_version()))
    print("%-6s %8s %10s %10s %7s" % ("run", "seconds", "published", "unchanged", "failed"))
    for row in rows:
        print("%-6s %8.1f %10d %10d %7d" % (row["run"], row["seconds"], row["published"], row["unchanged"],
                                           row["failed"]))
    with open(args.json, "w") as out:
        json.dump({"machine": platform.machine(), "python": platform.python_version(), "jobs": args.jobs,
                   "rows": rows}, out, indent=2)
        out.write("\n")
    if rows[0]["failed"] or rows[1]["published"] or rows[1]["failed"]:
        raise SystemExit("bench/publish: the first run failed somewhere, or the second published again")


if __name__ == "__main__":
    main()
