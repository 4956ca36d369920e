"""The release workflow's smoke test: the just-published layers, attached to a real function, work.

    python tools/release/smoke.py --layers-json build/release/layers.json --region us-east-1 --role-arn arn:aws:iam::...

For each layer of layers.json in that region, each runtime its version declares
(CompatibleRuntimes: python3.10-3.14, what the zip was published with) and each architecture it
declares (x86_64, arm64): create a function with the layer (in parallel, 8 at once),
``AWS_PYTHON_KEEPALIVE=1`` and ``AWS_PYTHON_KEEPALIVE_DEBUG=1``,
whose handler makes one STS GetCallerIdentity call (allowed to any role, so the execution role
needs nothing but the Lambda trust policy), invoke it once with the log tail, check:

- the invocation succeeded (no FunctionError) and the call returned an account;
- the log tail has the layer's ``aws-keepalive: DEBUG patched botocore`` line: the hook ran and
  patched the SDK the function imported;
- with the full layer, that botocore is the layer's (``/opt/python/botocore``).

Every function is deleted afterwards, also when a check or a call fails.  Exit status 1 when any
check failed.  The release workflow runs it in one region between the stage step (every region's
version published, private: a layer version is usable by its own account's functions before any
grant) and the promote step that makes them public.
"""

import argparse
import base64
import concurrent.futures
import io
import json
import sys
import time
import uuid
import zipfile

import boto3

HANDLER = '''
import boto3, botocore

def handler(event, context):
    identity = boto3.client("sts").get_caller_identity()
    return {"account": identity["Account"], "botocore": botocore.__version__, "botocore_file": botocore.__file__}
'''
PARALLEL = 8
PATCHED_LINE = "aws-keepalive: DEBUG patched botocore"


def function_zip():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("smoke.py", HANDLER)
    return buffer.getvalue()


def check(layer_name, invocation):
    """Problems with one invoke answer (an empty list: it passed)."""
    problems = []
    raw = invocation["Payload"].read()
    try:
        payload = json.loads(raw or b"null")
    except ValueError:
        payload = raw.decode("utf-8", "replace")
    log = base64.b64decode(invocation.get("LogResult", "")).decode("utf-8", "replace")
    if invocation.get("FunctionError"):
        problems.append("the function failed: %s" % json.dumps(payload)[:500])
    elif not (isinstance(payload, dict) and payload.get("account")):
        problems.append("no account in the answer: %r" % payload)
    if PATCHED_LINE not in log:
        problems.append("no '%s' line in the log tail:\n%s" % (PATCHED_LINE, log[-2000:]))
    if not layer_name.endswith("-hook") and not invocation.get("FunctionError") and isinstance(payload, dict) and \
            not str(payload.get("botocore_file", "")).startswith("/opt/python/botocore/"):
        problems.append("the function imported %s, not the layer's botocore" % payload.get("botocore_file"))
    return problems


def combinations(client, layers):
    """[(layer name, ARN, runtime, architecture)]: every runtime and architecture each version declares."""
    result = []
    for layer_name, layer_arn in sorted(layers.items()):
        layer, _, number = layer_arn.rpartition(":")
        version = client.get_layer_version(LayerName=layer, VersionNumber=int(number))
        for runtime in version.get("CompatibleRuntimes") or []:
            for architecture in version.get("CompatibleArchitectures") or ["x86_64"]:
                result.append((layer_name, layer_arn, runtime, architecture))
    return result


def smoke_one(client, layer_name, layer_arn, runtime, architecture, role_arn):
    """Create, invoke and delete one function; returns its problems."""
    name = "keepalive-smoke-%s-%s-%s" % (runtime.replace(".", ""), architecture.replace("_", ""), uuid.uuid4().hex[:8])
    client.create_function(
        FunctionName=name, Runtime=runtime, Role=role_arn, Handler="smoke.handler",
        Code={"ZipFile": function_zip()}, Layers=[layer_arn], Architectures=[architecture],
        Environment={"Variables": {"AWS_PYTHON_KEEPALIVE": "1", "AWS_PYTHON_KEEPALIVE_DEBUG": "1"}},
        Timeout=30, MemorySize=256, Publish=False,
    )
    try:
        client.get_waiter("function_active_v2").wait(FunctionName=name)
        return check(layer_name, client.invoke(FunctionName=name, LogType="Tail", Payload=b"{}"))
    finally:
        client.delete_function(FunctionName=name)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers-json", required=True)
    parser.add_argument("--region", required=True)
    parser.add_argument("--role-arn", required=True, help="an execution role Lambda may assume (no permissions needed)")
    args = parser.parse_args(argv)
    with open(args.layers_json) as handle:
        layers = {name: arns[args.region] for name, arns in json.load(handle).items() if args.region in arns}
    if not layers:
        raise SystemExit("smoke: %s has no layer in %s (publish there first)" % (args.layers_json, args.region))
    client = boto3.client("lambda", region_name=args.region)
    todo = combinations(client, layers)
    if not todo:
        raise SystemExit("smoke: the layers in %s declare no runtime" % args.region)

    def one(combination):
        layer_name, layer_arn, runtime, architecture = combination
        started = time.monotonic()
        try:
            problems = smoke_one(client, layer_name, layer_arn, runtime, architecture, args.role_arn)
        except Exception as error:  # report it and go on: every combination is checked
            problems = ["%s: %s" % (type(error).__name__, error)]
        return problems, time.monotonic() - started

    failed = False
    with concurrent.futures.ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        for (_name, layer_arn, runtime, architecture), (problems, seconds) in zip(todo, pool.map(one, todo)):
            failed = failed or bool(problems)
            print("%-4s %s on %s %s (%.0f s)%s" % ("FAIL" if problems else "ok", layer_arn, runtime, architecture,
                                                  seconds, "".join("\n     " + problem for problem in problems)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
