"""`make verify-aws` (tools/deploy/verify_aws.py, tools/deploy/verify-aws/): as far as it runs without an AWS account.

Run here: the credential check through make (no credentials, refused credentials), the VPC cost
prompt, the template through `sam validate --lint` (SAM's translator and cfn-lint), `sam deploy`
against a local moto server up to where moto stops serving it (CreateChangeSet with a template URL:
moto answers NoSuchBucket; moto has no AWS::Serverless transform either) and the teardown after that
failure, the EMF counting against moto's CloudWatch Logs with lines the layer's own metrics module
writes, and the invocation schedule and table with Lambda's invoke answers from a botocore Stubber
(moto invokes functions in Docker, which this machine lacks).  Not run: a deploy, an invocation,
a gap, a NAT gateway: those need the user's account, which is the point of the target."""

import io
import json
import os
import subprocess
import sys
import time

import boto3
import botocore.response
import botocore.stub
import pytest
from conftest import REPO, env, tool

from tools.deploy import verify_aws

sys.path.insert(0, os.path.join(REPO, "layer"))
from aws_keepalive import metrics  # noqa: E402

NO_CREDENTIALS = {name: value for name, value in env().items()
                  if name not in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}


def test_without_credentials_it_stops_at_once_and_says_so(tmp_path):
    """`make verify-aws` with no credentials fails before building anything (no release, no SAM
    install, no staging folder), naming what it looked for."""
    completed = subprocess.run(["make", "--no-print-directory", "-C", REPO, "verify-aws", "BUILD_DIR=%s" % tmp_path],
                               capture_output=True, text=True, env=NO_CREDENTIALS, timeout=300)
    assert completed.returncode != 0
    assert "no AWS credentials found" in completed.stderr and "nothing was made" in completed.stderr
    assert "sam deploy" not in completed.stdout and "release.py" not in completed.stdout
    assert os.listdir(tmp_path) == []


def test_refused_credentials_stop_at_once(tmp_path):
    """Credentials STS cannot confirm (here: no endpoint answers) stop it the same way."""
    script = os.path.join(REPO, "tools", "deploy", "verify_aws.py")
    completed = subprocess.run([sys.executable, script, "--check-credentials"],
                               capture_output=True, text=True, env=env(AWS_ENDPOINT_URL="http://127.0.0.1:9",
                                                                       AWS_MAX_ATTEMPTS="1"), timeout=120)
    assert completed.returncode == 2
    assert "the AWS credentials found do not work" in completed.stderr


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_vpc_costs_are_said_and_asked():
    """VPC=1 prints the NAT gateway estimate; it goes on with YES=1 or a 'y' typed at a terminal, and
    stops without a terminal or on anything else."""
    out = io.StringIO()
    verify_aws.confirm_vpc(1800, yes=True, out=out)
    assert "NAT gateway" in out.getvalue() and "USD" in out.getvalue()
    with pytest.raises(verify_aws.Failure, match="YES=1"):
        verify_aws.confirm_vpc(1800, yes=False, stdin=io.StringIO("y\n"), out=io.StringIO())
    verify_aws.confirm_vpc(1800, yes=False, stdin=Terminal("y\n"), out=io.StringIO())
    with pytest.raises(verify_aws.Failure, match="not accepted"):
        verify_aws.confirm_vpc(1800, yes=False, stdin=Terminal("\n"), out=io.StringIO())
    assert verify_aws.vpc_estimate(1800) == (1, 0.05)


def test_the_template_translates_and_lints(tmp_path):
    """tools/deploy/verify-aws/template.yaml passes `sam validate --lint` (the SAM translator, then cfn-lint),
    with and without the VPC condition's resources in play."""
    completed = subprocess.run([tool("AWS_KEEPALIVE_SAM"), "validate", "--lint", "--region", "us-east-1", "-t",
                                os.path.join(REPO, "tools", "deploy", "verify-aws", "template.yaml")],
                               capture_output=True, text=True,
                               env=env(PATH=tool("AWS_KEEPALIVE_SAM_PATH")), timeout=300)
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_the_long_call_template_translates_and_lints():
    """tools/deploy/verify-longcall/template.yaml (docs/verify-aws.md's long-call recipe) passes
    `sam validate --lint`."""
    completed = subprocess.run([tool("AWS_KEEPALIVE_SAM"), "validate", "--lint", "--region", "us-east-1", "-t",
                                os.path.join(REPO, "tools", "deploy", "verify-longcall", "template.yaml")],
                               capture_output=True, text=True,
                               env=env(PATH=tool("AWS_KEEPALIVE_SAM_PATH")), timeout=300)
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_a_failed_deploy_is_torn_down(release, moto_endpoint, tmp_path):
    """sam deploy against moto fails (moto serves no CreateChangeSet from a template URL); the run says
    so, deletes the stack and every artifact sam deploy uploaded to the bucket, and exits 2; the
    staged folder holds the lab's app.py unchanged."""
    s3 = boto3.client("s3", region_name="us-east-1", endpoint_url=moto_endpoint, aws_access_key_id="test",
                      aws_secret_access_key="test")
    s3.create_bucket(Bucket="verify-artifacts")
    layer_zip = next(os.path.join(release, f) for f in os.listdir(release)
                     if f.startswith("aws-python-keepalive-0") and f.endswith(".zip"))
    completed = subprocess.run(
        [sys.executable, os.path.join(REPO, "tools", "deploy", "verify_aws.py"), "--sam", tool("AWS_KEEPALIVE_SAM"),
         "--layer-zip", layer_zip, "--region", "us-east-1", "--gaps", "0", "--steady", "1", "--short-gap-s", "1",
         "--s3-bucket", "verify-artifacts", "--work", str(tmp_path / "work"), "--json", str(tmp_path / "out.json")],
        capture_output=True, text=True, timeout=600,
        env=env(AWS_ENDPOINT_URL=moto_endpoint, PATH=tool("AWS_KEEPALIVE_SAM_PATH")))
    assert completed.returncode == 2, completed.stdout + completed.stderr
    assert "sam deploy of keepalive-verify-" in completed.stderr
    stack = completed.stderr.split("deleted stack ")[1].split()[0]
    cloudformation = boto3.client("cloudformation", region_name="us-east-1", endpoint_url=moto_endpoint,
                                  aws_access_key_id="test", aws_secret_access_key="test")
    live = [s["StackName"] for s in cloudformation.list_stacks()["StackSummaries"]
            if s["StackStatus"] != "DELETE_COMPLETE"]
    assert stack not in live
    with open(os.path.join(REPO, "examples", "put_item", "app.py")) as lab, \
            open(tmp_path / "work" / "function" / "app.py") as staged:
        assert staged.read() == lab.read()
    assert not (tmp_path / "out.json").exists()
    # What sam deploy uploaded under the stack's prefix is gone too (every version).
    assert "uploaded artifact(s) under s3://verify-artifacts/%s/" % stack in completed.stderr
    left = s3.list_object_versions(Bucket="verify-artifacts", Prefix=stack + "/")
    assert not left.get("Versions") and not left.get("DeleteMarkers")


def test_emf_counts_from_the_layers_own_lines(moto_endpoint):
    """The EMF records the layer's metrics module writes, read back from CloudWatch Logs (moto), sum to
    the counts: new connections per reason and stale reuses."""
    logs = boto3.client("logs", region_name="us-east-1", endpoint_url=moto_endpoint, aws_access_key_id="test",
                        aws_secret_access_key="test")
    group = "/aws/lambda/verify-emf"
    logs.create_log_group(logGroupName=group)
    logs.create_log_stream(logGroupName=group, logStreamName="s")
    now_ms = int(time.time() * 1000)  # CloudWatch Logs drops events older than its retention window
    lines = [json.dumps(record) for record in metrics.records(
        {"reasons": {"first use": [1, [12.5]], "max idle": [2, [9.0, 8.0]]}, "counts": {"StaleReuses": 1}}, now_ms)]
    lines += [json.dumps(record) for record in metrics.records(
        {"reasons": {"max idle": [1, []]}, "counts": {}}, now_ms)]
    logs.put_log_events(logGroupName=group, logStreamName="s",
                        logEvents=[{"timestamp": now_ms + n, "message": line} for n, line in enumerate(
                            ["START RequestId: x"] + lines)])
    counts = verify_aws.emf_counts(logs, "verify-emf", now_ms - 60000)
    assert counts == {"NewConnections": {"first use": 1, "max idle": 3}, "StaleReuses": 1}
    assert verify_aws.emf_counts(logs, "no-such-function", 0) == {"NewConnections": {}, "StaleReuses": 0}


def invoke_answer(payload, error=None):
    answer = {"StatusCode": 200, "Payload": botocore.response.StreamingBody(io.BytesIO(json.dumps(payload).encode()),
                                                                             len(json.dumps(payload)))}
    if error:
        answer["FunctionError"] = error
    return answer


def test_schedule_and_table():
    """Every function is invoked once per round: the warm-up is not counted, steady rounds wait the
    short gap and gap rounds the long one; the table gives each configuration's percentiles of the
    function's own put timing, its retries and its failed invocations."""
    client = boto3.client("lambda", region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test")
    stubber = botocore.stub.Stubber(client)
    names = {"NoLayerOne": "f-no", "LayerOnOne": "f-on"}
    answers = [({"put_ms": 50.0, "retries": 0}, {"put_ms": 40.0, "retries": 0}),  # warm-up
               ({"put_ms": 5.0, "retries": 0}, {"put_ms": 5.5, "retries": 0}),  # steady
               ({"put_ms": 300.0, "retries": 1}, {"put_ms": 6.0, "retries": 0}),  # gap 1
               ({"errorMessage": "timeout"}, {"put_ms": 7.0, "retries": 0})]  # gap 2
    for no_layer, layer_on in answers:
        stubber.add_response("invoke", invoke_answer(no_layer, "Unhandled" if "errorMessage" in no_layer else None),
                             {"FunctionName": "f-no", "Payload": b"{}"})
        stubber.add_response("invoke", invoke_answer(layer_on), {"FunctionName": "f-on", "Payload": b"{}"})
    waits = []
    with stubber:
        records = verify_aws.schedule(client, ["f-no", "f-on"], steady=1, short_gap_s=5, gaps=2, gap_s=380,
                                      sleep=waits.append, out=io.StringIO())
    assert waits == [5, 380, 380]
    assert [len(records["f-no"][phase]) for phase in ("steady", "gaps")] == [1, 2]
    rows = verify_aws.table_rows(records, names)["handler"]
    assert rows == [["no layer", "steady", 1, "5.0", "5.0", "5.0", "5.0", 0, 0],
                    ["no layer", "gaps", 2, "300.0", "300.0", "300.0", "300.0", 1, 1],
                    ["layer on", "steady", 1, "5.5", "5.5", "5.5", "5.5", 0, 0],
                    ["layer on", "gaps", 2, "6.0", "7.0", "7.0", "7.0", 0, 0]]
    table = verify_aws.markdown(rows, header=verify_aws.HEADER)
    assert table.splitlines()[0].startswith("| configuration") and "300.0 |" in table


def test_tls_summary_per_service():
    """Per service: tickets offered, the lifetime hints seen, and gap calls whose connection resumed
    (what verify_app.py's tls_probe reported with each call)."""
    def call(resumed, hint=3600):
        return {"tls": {"dynamodb": [{"host": "h", "version": "TLSv1.3", "resumed": resumed, "ticket": True,
                                      "lifetime_hint_s": hint}], "sts": []}}

    summary = verify_aws.tls_summary({"steady": [call(False)], "gaps": [call(True), call(False, 7200),
                                                                        {"tls": {"error": "x"}}]})
    assert summary["dynamodb"] == {"tickets": True, "lifetime_hints_s": [3600, 7200], "versions": ["TLSv1.3"],
                                   "gaps_resumed": 1, "gaps": 2}
    assert summary["sts"]["gaps"] == 0 and summary["sts"]["tickets"] is False


def test_the_function_reports_the_sdk_and_python_it_runs_on(tmp_path):
    """verify_app.runtime_sdk() in the stand-in runtime's own interpreter (its bundled-kind boto3 and
    real awslambdaric): the versions installed there, the Python build and the execution environment,
    and every handler's answer carries them."""
    python = os.path.join(REPO, ".venv", "lambda-3.12", "bin", "python")
    function = os.path.join(REPO, "tools", "deploy", "verify-aws", "function")
    probe = ("import json, sys; sys.path[:0] = %r; import verify_app; "
             "print(json.dumps([verify_app.runtime_sdk(), verify_app._with_retries({})]))"
             % [function, os.path.dirname(verify_aws.EXAMPLE)])
    completed = subprocess.run([python, "-c", probe], capture_output=True, text=True,
                               env=env(AWS_EXECUTION_ENV="AWS_Lambda_python3.12", TABLE_NAME="t"), timeout=60)
    assert completed.returncode == 0, completed.stderr
    sdk, answer = json.loads(completed.stdout)
    assert answer == {"retries": 0, "sdk": sdk}
    lock = open(os.path.join(REPO, "lab", "runtime-requirements.txt")).read()
    runtime = os.environ.get("AWS_KEEPALIVE_RUNTIME_BOTO3", "1.42.97")
    assert sdk["boto3"] == sdk["botocore"] == runtime
    assert "awslambdaric==%s " % sdk["awslambdaric"] in lock and sdk["urllib3"]
    assert sdk["python"].startswith("3.12.") and "(" in sdk["python"]
    assert sdk["runtime"] == "AWS_Lambda_python3.12" and "/lambda-3.12/" in sdk["botocore_file"]


def sdk_record(boto3_version, botocore_file):
    return {"ok": True, "put_ms": 5.0, "retries": 0, "client_ms": 9.0, "error": None,
            "sdk": {"boto3": boto3_version, "botocore": boto3_version, "urllib3": "1.26.20", "awslambdaric": "3.1.1",
                    "python": "3.13.7 (main)", "runtime": "AWS_Lambda_python3.13", "botocore_file": botocore_file}}


@pytest.mark.parametrize("release, known", [("1.42.97", True), ("1.41.3", False)])
def test_report_names_each_functions_sdk_and_how_to_add_the_release(release, known):
    """The report's SDK lines: the runtime's versions and Python build (no layer) beside the layer's,
    then whether lab/runtime-sdk knows that release, or the commands that add it to the hook flavor."""
    names = {"NoLayerOne": "f-no", "LayerOnOne": "f-on"}
    records = {"f-no": {"steady": [sdk_record(release, "/var/runtime/botocore/__init__.py")], "gaps": []},
               "f-on": {"steady": [sdk_record("1.44.8", "/opt/python/botocore/__init__.py")], "gaps": []}}
    lines = verify_aws.sdk_lines(records, names)
    assert lines[0] == ("no layer: AWS_Lambda_python3.13, Python 3.13.7 (main); boto3 %s, botocore %s "
                        "(/var/runtime/botocore/__init__.py), urllib3 1.26.20, awslambdaric 3.1.1" % (release, release))
    assert lines[1].startswith("layer on: ") and "botocore 1.44.8 (/opt/python/botocore" in lines[1]
    if known:
        assert lines[2].startswith("hook flavor: knows this runtime's boto3/botocore %s" % release)
    else:
        assert "make lock-runtime-sdk RUNTIME_BOTO3=%s" % release in lines[2] and "does not know" in lines[2]


TRANSLATE = '''
import json, sys
from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse

class NoManagedPolicies:
    def load(self):
        return {}

template = yaml_parse(open(sys.argv[1]).read())
# What sam deploy's packaging does first: local paths become the S3 objects it uploaded.
template["Globals"]["Function"]["CodeUri"] = "s3://artifacts/stack/function.zip"
for resource in template["Resources"].values():
    if resource["Type"] == "AWS::Serverless::LayerVersion":
        resource["Properties"]["ContentUri"] = "s3://artifacts/stack/layer.zip"
print(json.dumps(transform(template, {"AWS::Region": "us-east-1", "AWS::AccountId": "123456789012"},
                           NoManagedPolicies())))
'''


def test_the_stack_owns_every_log_group_it_writes(tmp_path):
    """The template through SAM's own translator (what sam deploy sends to CloudFormation): every
    Lambda function has an AWS::Logs::LogGroup in the stack named /aws/lambda/<that function>, with a
    retention and DeletionPolicy Delete, so deleting the stack leaves no log group behind."""
    sam_python = os.path.join(os.path.dirname(tool("AWS_KEEPALIVE_SAM")), "python")
    script = tmp_path / "translate.py"
    script.write_text(TRANSLATE)
    completed = subprocess.run([sam_python, str(script), os.path.join(REPO, "tools", "deploy", "verify-aws",
                                                                      "template.yaml")],
                               capture_output=True, text=True, env=env(), timeout=300)
    assert completed.returncode == 0, completed.stderr
    resources = json.loads(completed.stdout)["Resources"]
    functions = sorted(name for name, r in resources.items() if r["Type"] == "AWS::Lambda::Function")
    assert len(functions) == 6
    groups = {json.dumps(r["Properties"]["LogGroupName"]): r for r in resources.values()
              if r["Type"] == "AWS::Logs::LogGroup"}
    for function in functions:
        group = groups[json.dumps({"Fn::Sub": "/aws/lambda/${%s}" % function})]
        assert group["Properties"]["RetentionInDays"] >= 1 and group["DeletionPolicy"] == "Delete"
