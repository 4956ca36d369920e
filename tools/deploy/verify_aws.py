"""`make verify-aws`: the demo's experiment in your own AWS account, then everything deleted.

    make verify-aws [REGION=us-east-1] [MEMORY_MB=128] [VPC=1 [YES=1]] [GAPS=3] [GAP_S=380]

What no lab can answer: whether keep-alive probes leave a frozen execution environment, and what
your own path (NAT gateway, VPC endpoint, none) does to a pooled connection.  Steps:

1. credentials: none, or ones STS refuses, stop here at once, before anything is made;
2. ``VPC=1`` puts the functions in a private subnet behind a NAT gateway (the path with the 350 s
   idle timeout): it costs money by the hour, so the estimate is printed and a yes is asked,
   unless ``YES=1`` (without a terminal and without YES=1 it stops);
3. ``sam deploy`` of tools/deploy/verify-aws/template.yaml (staged into build/verify-aws/ with the lab's
   example function, examples/put_item/app.py, unchanged, and the release's full layer zip): a
   DynamoDB table and the function three times (no layer; AWS's ``BOTOCORE_TCP_KEEPALIVE=true``;
   the layer with ``AWS_PYTHON_KEEPALIVE=1`` and its EMF metrics on), each with one put per
   invocation and ten puts per invocation, at ``MEMORY_MB``;
4. invocations, all functions in each round: one warm-up (not counted), ``STEADY`` rounds
   ``SHORT_GAP_S`` apart, then ``GAPS`` rounds each after an idle ``GAP_S`` (> 350 s).  Each
   invocation: the function's own timing of its put(s), botocore's retries of them, errors;
5. the layer's EMF records (NewConnections by reason, StaleReuses) from CloudWatch Logs, and per
   service (DynamoDB, STS) whether its endpoint offered TLS tickets, their lifetime hint, and
   whether the layer's connection replaced after each gap resumed its TLS session (tls_probe.py);
6. the demo's table per handler, and build/verify-aws.json;
7. the stack deleted (CloudFormation DeleteStack, waited for), also on Ctrl-C, SIGTERM or a failure:
   with it the functions' log groups (the template declares them, 1-day retention: Lambda would
   otherwise create ``/aws/lambda/<fn>`` itself, outside the stack, and it would outlive it), then
   every object ``sam deploy`` uploaded (code, layer, template: under the stack's name as S3 prefix,
   in ``--s3-bucket`` or SAM's managed bucket), every version of each.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid

import boto3
import botocore.exceptions

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, REPO)
from lab.experiments.demo.report import markdown  # noqa: E402  (the demo's own table, same columns but two)
from lab.standin.driver import percentile  # noqa: E402
STACK_DIR = os.path.join(REPO, "tools", "deploy", "verify-aws")
EXAMPLE = os.path.join(REPO, "examples", "put_item", "app.py")
RUNTIME_SDK_DIR = os.path.join(REPO, "lab", "runtime-sdk")  # the runtime releases the hook flavor knows
# label, template logical id prefix: the demo's configurations (the layer switched off is left out).
CONFIGS = (("no layer", "NoLayer"), ("no layer, BOTOCORE_TCP_KEEPALIVE=true", "AwsSwitch"), ("layer on", "LayerOn"))
HANDLERS = (("One", "handler", "1 put"), ("Ten", "handler_ten", "10 puts"))
NAT_IDLE_TIMEOUT_S = 350
# us-east-1 on-demand prices (2026): a NAT gateway by the hour and per GB processed; the public IPv4
# address by the hour.  The run moves a few MB: the hours are the cost.
NAT_HOURLY_USD = 0.045
NAT_PER_GB_USD = 0.045
IPV4_HOURLY_USD = 0.005
DEPLOY_AND_DELETE_S = 600


class Failure(Exception):
    """A step that cannot go on; its message is for the user."""


def check_credentials(session):
    """The account id; Failure at once when there are no credentials or STS refuses them."""
    if session.get_credentials() is None:
        raise Failure("no AWS credentials found (AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, "
                      "`aws configure` or `aws sso login`): make verify-aws deploys a stack into your own "
                      "account, so it needs them; nothing was made")
    try:
        return session.client("sts").get_caller_identity()["Account"]
    except (botocore.exceptions.ClientError, botocore.exceptions.BotoCoreError) as error:
        raise Failure("the AWS credentials found do not work (%s); nothing was made" % error) from error


def run_seconds(steady, short_gap_s, gaps, gap_s):
    return DEPLOY_AND_DELETE_S + steady * short_gap_s + gaps * gap_s


def vpc_estimate(seconds):
    """USD for the NAT gateway and its address over ``seconds`` (started hours count whole)."""
    hours = max(1, -(-int(seconds) // 3600))
    return hours, round(hours * (NAT_HOURLY_USD + IPV4_HOURLY_USD) + 0.01 * NAT_PER_GB_USD, 2)


def confirm_vpc(seconds, yes, stdin=sys.stdin, out=sys.stderr):
    hours, usd = vpc_estimate(seconds)
    print("VPC=1: a NAT gateway and an Elastic IP for about %d min: billed %d hour(s), about USD %.2f in us-east-1 "
          "(NAT gateway %.3f/h + public IPv4 %.3f/h + %.3f/GB processed; other regions cost more or less)"
          % (seconds // 60, hours, usd, NAT_HOURLY_USD, IPV4_HOURLY_USD, NAT_PER_GB_USD), file=out)
    if yes:
        return
    if not stdin.isatty():
        raise Failure("VPC=1 costs money: run with YES=1 to accept the estimate above (no terminal to ask on)")
    print("Deploy it? [y/N] ", end="", file=out, flush=True)
    if stdin.readline().strip().lower() not in ("y", "yes"):
        raise Failure("not deployed: the estimate was not accepted")


def stage(work, layer_zip):
    """build/verify-aws/: the template, the function folder (verify_app.py + the lab's app.py) and layer.zip."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(STACK_DIR, work)
    shutil.copyfile(EXAMPLE, os.path.join(work, "function", "app.py"))
    shutil.copyfile(layer_zip, os.path.join(work, "layer.zip"))
    return os.path.join(work, "template.yaml")


def deploy(sam, template, stack, region, parameters, bucket=None, environ=None):
    """sam deploy; the artifacts go to ``bucket``, or to the bucket SAM manages (--resolve-s3)."""
    where = ["--s3-bucket", bucket] if bucket else ["--resolve-s3"]
    command = [sam, "deploy", "--template-file", template, "--stack-name", stack, "--region", region] + where + \
              ["--s3-prefix", stack] + \
              ["--capabilities", "CAPABILITY_IAM", "--no-confirm-changeset",
               "--no-fail-on-empty-changeset", "--parameter-overrides"] + \
              ["%s=%s" % item for item in sorted(parameters.items())]
    completed = subprocess.run(command, env=environ)
    if completed.returncode != 0:
        raise Failure("sam deploy of %s failed (exit %d): see its output above" % (stack, completed.returncode))


def outputs(cloudformation, stack):
    (description,) = cloudformation.describe_stacks(StackName=stack)["Stacks"]
    return {output["OutputKey"]: output["OutputValue"] for output in description.get("Outputs", [])}


def teardown(cloudformation, stack, out=sys.stderr):
    """Delete the stack and wait; says so.  Never raises (it runs in finally)."""
    print("deleting stack %s ..." % stack, file=out, flush=True)
    try:
        cloudformation.delete_stack(StackName=stack)
        cloudformation.get_waiter("stack_delete_complete").wait(StackName=stack,
                                                                WaiterConfig={"Delay": 10, "MaxAttempts": 90})
        print("deleted stack %s" % stack, file=out)
        return True
    except Exception as error:  # the user must hear that something may be left behind
        print("could not delete stack %s (%s): delete it in the CloudFormation console" % (stack, error), file=out)
        return False


# The stack `sam deploy --resolve-s3` makes once per account and region, and its bucket's output.
SAM_MANAGED_STACK = "aws-sam-cli-managed-default"


def artifacts_bucket(cloudformation, bucket):
    """The bucket sam deploy uploaded to: ``bucket``, else SAM's managed one (None if it has none)."""
    if bucket:
        return bucket
    try:
        (managed,) = cloudformation.describe_stacks(StackName=SAM_MANAGED_STACK)["Stacks"]
    except Exception:  # no managed stack: nothing was uploaded there
        return None
    return {o["OutputKey"]: o["OutputValue"] for o in managed.get("Outputs", [])}.get("SourceBucket")


def remove_artifacts(s3, bucket, stack, out=sys.stderr):
    """Delete every version of every object under ``<stack>/`` in ``bucket``; returns how many. Never
    raises (it runs in finally): what cannot be deleted is said."""
    removed = 0
    try:
        pages = s3.get_paginator("list_object_versions").paginate(Bucket=bucket, Prefix=stack + "/")
        for page in pages:
            doomed = [{"Key": v["Key"], "VersionId": v["VersionId"]}
                      for v in page.get("Versions", []) + page.get("DeleteMarkers", [])]
            if doomed:
                s3.delete_objects(Bucket=bucket, Delete={"Objects": doomed, "Quiet": True})
                removed += len(doomed)
        print("deleted %d uploaded artifact(s) under s3://%s/%s/" % (removed, bucket, stack), file=out)
    except Exception as error:  # the user must hear that something may be left behind
        print("could not delete s3://%s/%s/ (%s): delete it by hand" % (bucket, stack, error), file=out)
    return removed


def invoke(lambda_client, function):
    """One invocation: {'ok', 'put_ms', 'retries', 'client_ms', 'error'}."""
    started = time.perf_counter()
    answer = lambda_client.invoke(FunctionName=function, Payload=b"{}")
    client_ms = (time.perf_counter() - started) * 1000
    payload = json.loads(answer["Payload"].read() or b"null")
    if answer.get("FunctionError"):
        return {"ok": False, "put_ms": None, "retries": 0, "client_ms": client_ms, "error": payload}
    puts = payload["put_ms"] if isinstance(payload["put_ms"], list) else [payload["put_ms"]]
    return {"ok": True, "put_ms": sum(puts), "retries": payload.get("retries", 0), "client_ms": client_ms,
            "error": None, "sdk": payload.get("sdk"), "tls": payload.get("tls")}


def tls_summary(calls):
    """Per service, from one function's calls (tls_probe.py): whether the endpoint sent TLS tickets,
    their lifetime hints, and how many gap-phase calls found their connection resumed."""
    summary = {}
    for phase in ("steady", "gaps"):
        for call in calls.get(phase, []):
            for service, connections in (call.get("tls") or {}).items():
                if not isinstance(connections, list):
                    continue
                entry = summary.setdefault(service, {"tickets": False, "lifetime_hints_s": [],
                                                     "versions": [], "gaps_resumed": 0, "gaps": 0})
                for connection in connections:
                    entry["tickets"] = entry["tickets"] or connection["ticket"]
                    for key, value in (("lifetime_hints_s", connection["lifetime_hint_s"]),
                                       ("versions", connection["version"])):
                        if value is not None and value not in entry[key]:
                            entry[key].append(value)
                if phase == "gaps" and connections:
                    entry["gaps"] += 1
                    entry["gaps_resumed"] += any(connection["resumed"] for connection in connections)
    return summary


def schedule(lambda_client, functions, steady, short_gap_s, gaps, gap_s, sleep=time.sleep, out=sys.stderr):
    """Every function once per round: warm-up, steady rounds, gap rounds; {function: {phase: [record]}}."""
    records = {function: {"steady": [], "gaps": []} for function in functions}
    rounds = [("warm-up", 0)] + [("steady", short_gap_s)] * steady + [("gaps", gap_s)] * gaps
    for number, (phase, wait_s) in enumerate(rounds, 1):
        if wait_s:
            print("round %d/%d (%s): waiting %d s" % (number, len(rounds), phase, wait_s), file=out, flush=True)
            sleep(wait_s)
        for function in functions:
            record = invoke(lambda_client, function)
            if phase != "warm-up":
                records[function][phase].append(record)
    return records


def emf_counts(logs, function, since_ms):
    """{'NewConnections': {reason: n}, 'StaleReuses': n} from the function's EMF lines in CloudWatch Logs."""
    counts = {"NewConnections": {}, "StaleReuses": 0}
    group = "/aws/lambda/%s" % function
    try:
        # Every line of the run (a few per invocation: START, END, REPORT, the layer's EMF), parsed here.
        pages = logs.get_paginator("filter_log_events").paginate(logGroupName=group, startTime=since_ms)
        for page in pages:
            for event in page["events"]:
                try:
                    record = json.loads(event["message"])
                except ValueError:
                    continue
                if not isinstance(record, dict) or "_aws" not in record:
                    continue
                if "NewConnections" in record:
                    by_reason = counts["NewConnections"]
                    reason = record.get("Reason", "?")
                    by_reason[reason] = by_reason.get(reason, 0) + record["NewConnections"]
                counts["StaleReuses"] += record.get("StaleReuses", 0)
    except logs.exceptions.ResourceNotFoundException:
        pass
    return counts


def table_rows(records, names):
    """The demo's rows: (configuration, phase, calls, p50, p95, p99, max, retries, failed) per handler."""
    rows = {}
    for label, prefix in CONFIGS:
        for suffix, handler, _ in HANDLERS:
            for phase in ("steady", "gaps"):
                calls = records.get(names.get(prefix + suffix), {}).get(phase, [])
                if not calls:
                    continue
                ms = [call["put_ms"] for call in calls if call["ok"]]
                cells = ["%.1f" % v if v is not None else "-" for v in
                         [percentile(ms, p) for p in (50, 95, 99)] + [max(ms) if ms else None]]
                rows.setdefault(handler, []).append([label, phase, len(calls)] + cells +
                                                    [sum(call["retries"] for call in calls),
                                                     sum(1 for call in calls if not call["ok"])])
    return rows


def sdk_lines(records, names, runtime_sdk_dir=RUNTIME_SDK_DIR):
    """What each configuration's function imported (the runtime's SDK without the layer, the layer's with
    it) and the Python build, then one line on the hook flavor: whether it knows the runtime's botocore
    (lab/runtime-sdk/<version>.txt) and, if not, the commands that add it."""
    lines, runtime = [], None
    for label, prefix in CONFIGS:
        sdk = next((call["sdk"] for suffix, _, _ in HANDLERS for phase in ("steady", "gaps")
                    for call in records.get(names.get(prefix + suffix), {}).get(phase, []) if call.get("sdk")), None)
        if not sdk:
            continue
        lines.append("%s: %s, Python %s; boto3 %s, botocore %s (%s), urllib3 %s, awslambdaric %s" % (
            label, sdk.get("runtime"), sdk.get("python"), sdk.get("boto3"), sdk.get("botocore"),
            sdk.get("botocore_file"), sdk.get("urllib3"), sdk.get("awslambdaric")))
        if prefix == "NoLayer":
            runtime = sdk
    # lab/runtime-sdk/<boto3 version>.txt pins boto3 and botocore at that one number (mk/lock.mk).
    if runtime and runtime.get("boto3") and os.path.exists(os.path.join(runtime_sdk_dir, runtime["boto3"] + ".txt")):
        lines.append("hook flavor: knows this runtime's boto3/botocore %s (lab/runtime-sdk/%s.txt): prepared "
                     "client creation" % (runtime["boto3"], runtime["boto3"]))
    elif runtime and runtime.get("boto3"):
        lines.append("hook flavor: does not know this runtime's boto3 %s / botocore %s (stock client creation); "
                     "to add it: make lock-runtime-sdk RUNTIME_BOTO3=%s, commit lab/runtime-sdk/%s.txt (make layer "
                     "FLAVOR=hook then prepares it)" % (runtime["boto3"], runtime["botocore"], runtime["boto3"],
                                                          runtime["boto3"]))
    return lines


HEADER = ("configuration", "phase", "calls", "p50 ms", "p95 ms", "p99 ms", "max ms", "retries", "failed")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sam")
    parser.add_argument("--layer-zip", help="the release's full layer zip")
    parser.add_argument("--region", default=os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
                        or "us-east-1")
    parser.add_argument("--memory-mb", type=int, default=128)
    parser.add_argument("--vpc", action="store_true")
    parser.add_argument("--yes", action="store_true")
    parser.add_argument("--steady", type=int, default=5)
    parser.add_argument("--short-gap-s", type=int, default=5)
    parser.add_argument("--gaps", type=int, default=3)
    parser.add_argument("--gap-s", type=int, default=380)
    parser.add_argument("--work", default=os.path.join("build", "verify-aws"))
    parser.add_argument("--json", default=os.path.join("build", "verify-aws.json"))
    parser.add_argument("--s3-bucket", help="the bucket sam deploy uploads the code and layer to (default: SAM's own)")
    parser.add_argument("--check-credentials", action="store_true",
                        help="only check the credentials (make runs this before building anything)")
    args = parser.parse_args(argv)
    if not args.check_credentials and not (args.sam and args.layer_zip):
        parser.error("--sam and --layer-zip are needed")
    if args.gaps and args.gap_s <= NAT_IDLE_TIMEOUT_S:
        parser.error("GAP_S must exceed the NAT gateway's %d s idle timeout" % NAT_IDLE_TIMEOUT_S)
    try:
        session = boto3.session.Session(region_name=args.region)
        account = check_credentials(session)
        if args.check_credentials:
            return 0
        seconds = run_seconds(args.steady, args.short_gap_s, args.gaps, args.gap_s)
        if args.vpc:
            confirm_vpc(seconds, args.yes)
        print("account %s, %s: about %d min, then the stack is deleted" % (account, args.region, seconds // 60),
              file=sys.stderr)
        return run(session, args)
    except Failure as failure:
        print("verify-aws: %s" % failure, file=sys.stderr)
        return 2


def run(session, args):
    stack = "keepalive-verify-%s" % uuid.uuid4().hex[:8]
    cloudformation = session.client("cloudformation")
    template = stage(args.work, args.layer_zip)
    # SIGTERM (a CI cancel, kill) ends like Ctrl-C: through finally, which deletes the stack.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    started_ms = int(time.time() * 1000)
    try:
        deploy(args.sam, template, stack, args.region,
               {"MemorySize": args.memory_mb, "UseVpc": "true" if args.vpc else "false"}, args.s3_bucket)
        names = outputs(cloudformation, stack)
        functions = [names[prefix + suffix] for _, prefix in CONFIGS for suffix, _, _ in HANDLERS]
        records = schedule(session.client("lambda"), functions, args.steady, args.short_gap_s, args.gaps, args.gap_s)
        logs = session.client("logs")
        emf = {prefix + suffix: emf_counts(logs, names[prefix + suffix], started_ms)
               for _, prefix in CONFIGS if prefix == "LayerOn" for suffix, _, _ in HANDLERS}
        rows = table_rows(records, names)
        sdk = sdk_lines(records, names)
        print("\nthe SDK each function imported:\n" + "\n".join(sdk))
        for suffix, handler, what in HANDLERS:
            print("\napp.%s (%s per invocation; ms = the function's own timing of its %s)\n" % (handler, what, what))
            print(markdown(rows.get(handler, []), header=HEADER))
            counts = emf["LayerOn" + suffix]
            print("\nlayer on, EMF: new connections by reason %s, stale reuses %d"
                  % (json.dumps(counts["NewConnections"], sort_keys=True), counts["StaleReuses"]))
            for service, tls in sorted(tls_summary(records[names["LayerOn" + suffix]]).items()):
                print("layer on, TLS to %s: %s, tickets %s, lifetime hint %s s, connection after a gap resumed "
                      "in %d of %d calls" % (service, "/".join(tls["versions"]) or "?",
                                             "offered" if tls["tickets"] else "not offered",
                                             "/".join(str(v) for v in tls["lifetime_hints_s"]) or "-",
                                             tls["gaps_resumed"], tls["gaps"]))
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as out:
            json.dump({"region": args.region, "memory_mb": args.memory_mb, "vpc": args.vpc, "gap_s": args.gap_s,
                       "records": {key: records[names[key]] for key in names if names[key] in records},
                       "rows": rows, "emf": emf, "sdk": sdk}, out, indent=2, default=str)
            out.write("\n")
        print("\nwrote %s" % args.json, file=sys.stderr)
        return 0
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except Failure as failure:
        print("verify-aws: %s" % failure, file=sys.stderr)
        return 2
    finally:
        teardown(cloudformation, stack)
        bucket = artifacts_bucket(cloudformation, args.s3_bucket)
        if bucket:
            remove_artifacts(session.client("s3"), bucket, stack)


if __name__ == "__main__":
    sys.exit(main())
