"""What the Lambda stand-in itself costs: cold start per CPython and layer mode, invocation overhead.

    .venv/test-3.12/bin/python -m lab.experiments.standin_bench.run
        [--layer-zip build/layer.zip] [--starts 3] [--calls 50]

Cold start ("init") is spawn -> the runtime's first ``next``: interpreter start, the bootstrap, the
layer's ``.pth`` (hook), importing a handler module that imports boto3 and creates one DynamoDB client
(no request). Overhead is the client-observed duration of a handler that returns at once, with the
freeze/thaw cycle (SIGCONT, invoke, wait until idle, SIGSTOP) and without. Medians over the starts,
nearest-rank percentiles over the calls. The layer is read from a plain folder (``--opt`` route) and,
when root allows, from a read-only bind mount on /opt.
"""

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from lab import REPO
from lab.standin.driver import percentile
from lab.standin.lambda_env import PYTHON_MINORS, LambdaFunction, can_mount_opt, extract_layer

HANDLER = """
import boto3
client = boto3.client("dynamodb", endpoint_url="http://127.0.0.1:9")

def handler(event, context):
    return event
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layer-zip", default=str(REPO / "build" / "layer.zip"))
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--python", action="append", help="CPython minor (repeatable); default all")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="standin-bench-") as work:
        task = Path(work, "task")
        task.mkdir()
        (task / "app.py").write_text(HANDLER)
        opt = extract_layer(args.layer_zip, Path(work, "opt"))
        real = can_mount_opt() is None
        modes = [("no layer", None, {}), ("layer, off", opt, {}), ("layer, on", opt, {"AWS_PYTHON_KEEPALIVE": "1"})]
        print("| CPython | layer | /opt | init ms (median of %d) | call p50 ms | call p95 ms | no-freeze p50 ms |"
              % args.starts)
        print("|---|---|---|---|---|---|---|")
        for python in args.python or PYTHON_MINORS:
            for name, root, env in modes:
                for real_opt in ([False, True] if real and root is not None else [False]):
                    inits = []
                    for _ in range(args.starts):
                        with LambdaFunction(task, "app.handler", python=python, opt=root, env=env,
                                            real_opt=real_opt, observe=False) as fn:
                            inits.append(fn.init_ms)
                    with LambdaFunction(task, "app.handler", python=python, opt=root, env=env,
                                        real_opt=real_opt, observe=False) as fn:
                        frozen = [fn.invoke({"i": i}).duration_ms for i in range(args.calls)]
                    with LambdaFunction(task, "app.handler", python=python, opt=root, env=env,
                                        real_opt=real_opt, observe=False, freeze=False) as fn:
                        running = [fn.invoke({"i": i}).duration_ms for i in range(args.calls)]
                    print("| %s | %s | %s | %.0f | %.2f | %.2f | %.2f |" % (
                        python, name, "/opt (ro bind)" if real_opt else "folder", statistics.median(inits),
                        percentile(frozen, 50), percentile(frozen, 95), percentile(running, 50)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
