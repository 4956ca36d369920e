"""Behind OpenTelemetry's wrapper: the keep-alive timer the kernel runs on a function's pooled socket.

One stand-in function (CPython 3.12) started through AWS_LAMBDA_EXEC_WRAPPER=/opt/otel-instrument
(lab/experiments/otel/layer.py: the real OpenTelemetry packages in /opt/python), with a layer folder's hook
(``--layer-src``, default layer/) and the layer's own boto3/botocore (copied from the test venv,
1.44.5: new enough to read BOTOCORE_TCP_KEEPALIVE itself), writing to a DynamoDB-shaped endpoint on
127.0.0.1. Prints one row per configuration (route seen, init ms, the ``ss -tnop`` timer) and
writes the same rows to build/otel_compare.json.

    make .venv/test-3.12/bin/python
    PYTHONPATH=.:tests/lab .venv/test-3.12/bin/python -m lab.experiments.otel.compare
    # the hook as it was on main before this change (it exported BOTOCORE_TCP_KEEPALIVE=true):
    git archive main layer | tar -x -C /tmp/old && PYTHONPATH=.:tests/lab \\
      .venv/test-3.12/bin/python -m lab.experiments.otel.compare --layer-src /tmp/old/layer --no-dist-info
"""

import argparse
import re
import shutil
import sysconfig
import tempfile
from pathlib import Path

from lab.experiments.otel import layer as otel_layer
from lab.standin.lambda_env import LambdaFunction, hook_lines, keepalive_timers, layer_from_source
from lab import REPO
from bench.rows import write_rows

HANDLER = """
import boto3

client = boto3.client("dynamodb")

def handler(event, context):
    client.put_item(TableName="table", Item={"pk": {"S": "1"}})
    from opentelemetry import trace
    trace.get_tracer_provider().force_flush()
    return {}
"""
BOTO_STACK = ("boto3", "botocore", "s3transfer", "jmespath", "dateutil", "urllib3", "six.py")


def make_opt(root: Path, layer_src: Path, dist_info: bool) -> Path:
    python = layer_from_source(root, layer_src, dist_info) / "python"
    site_packages = Path(sysconfig.get_paths()["purelib"])
    for name in BOTO_STACK:
        (shutil.copytree if (site_packages / name).is_dir() else shutil.copy)(site_packages / name, python / name)
    return otel_layer.add_to(root)


def timer_of(pid: int, port: int) -> str:
    timers = keepalive_timers(pid, port)
    if not timers:
        return "no connection"
    return "no timer" if timers[0] is None else "keepalive," + timers[0]


def run(label: str, layer_src: Path, env: dict, dist_info: bool, endpoint) -> dict:
    with tempfile.TemporaryDirectory(prefix="otel-compare-") as tmp:
        opt = make_opt(Path(tmp) / "opt", layer_src, dist_info)
        task = Path(tmp) / "task"
        task.mkdir()
        (task / "fn.py").write_text(HANDLER)
        env = dict(env, AWS_ENDPOINT_URL_DYNAMODB=endpoint.url, AWS_LAMBDA_EXEC_WRAPPER=otel_layer.EXEC_WRAPPER)
        with LambdaFunction(task, "fn.handler", opt=opt, env=env) as fn:
            record = fn.invoke({})
            timer = timer_of(fn.proc.pid, endpoint.server_address[1])
            lines = hook_lines([line.text for line in fn.init_lines])
    routes = re.findall(r"on \(via (\w+)\)", "\n".join(lines))
    spans = sum('"name": "DynamoDB.PutItem"' in line for line in record.stdout)
    return {"config": label, "ok": record.ok, "routes": routes, "init_ms": round(fn.init_ms, 1),
            "timer": timer, "botocore_spans": spans}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layer-src", type=Path, default=REPO / "layer")
    parser.add_argument("--no-dist-info", action="store_true", help="no entry point (usercustomize alone)")
    parser.add_argument("--json", type=Path, default=REPO / "build" / "otel_compare.json")
    args = parser.parse_args(argv)
    from endpoint import Endpoint  # tests/lab/endpoint.py

    endpoint = Endpoint()
    debug = {"AWS_PYTHON_KEEPALIVE_DEBUG": "1"}
    try:
        rows = [run("switch on", args.layer_src, dict(debug, AWS_PYTHON_KEEPALIVE="1"),
                    not args.no_dist_info, endpoint),
                run("switch off", args.layer_src, debug, not args.no_dist_info, endpoint)]
    finally:
        endpoint.close()
    for row in rows:
        print("%-10s ok=%s routes=%-32s init=%7.1f ms  %-20s spans=%d" % (
            row["config"], row["ok"], ",".join(row["routes"]) or "-", row["init_ms"], row["timer"],
            row["botocore_spans"]))
    write_rows(str(args.json), rows, layer_src=str(args.layer_src))


if __name__ == "__main__":
    main()
