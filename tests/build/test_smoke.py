"""tools/release/smoke.py, the release workflow's smoke invoke: what it checks in an invoke answer, and that it
deletes its function whatever happens. moto cannot invoke a function here (it runs the code in
Docker, which this machine lacks), so the invoke answers of the checks are built in Lambda's shape;
create and delete run against moto."""

import base64
import io
import json
import os
import subprocess
import sys

import boto3
from conftest import REPO, env

from tools.packaging import layer_info
from tools.release import smoke

# The full layer's botocore: the pin (a bump moves it; the sample log follows).
PINNED = layer_info.pinned_versions(open(os.path.join(REPO, "layer", "requirements.txt")).read())["botocore"]
GOOD_LOG = "START RequestId: 1\naws-keepalive: DEBUG patched botocore %s at /opt/python/botocore\nEND\n" % PINNED


def answer(payload, log=GOOD_LOG, error=None):
    result = {"StatusCode": 200, "Payload": io.BytesIO(json.dumps(payload).encode()),
              "LogResult": base64.b64encode(log.encode()).decode()}
    if error:
        result["FunctionError"] = error
    return result


FULL_OK = {"account": "123456789012", "botocore": PINNED, "botocore_file": "/opt/python/botocore/__init__.py"}


def test_a_patched_call_through_the_layer_passes():
    """An answer with an account, the layer's 'patched botocore' debug line and (full layer) the
    layer's own botocore passes; the hook flavor may patch the runtime's botocore."""
    assert smoke.check("aws-python-keepalive", answer(FULL_OK)) == []
    runtime = dict(FULL_OK, botocore_file="/var/lang/lib/python3.13/site-packages/botocore/__init__.py")
    assert smoke.check("aws-python-keepalive-hook", answer(runtime)) == []


def test_each_failure_is_named():
    """No patched line, a function error, or the full layer running another botocore: each a problem."""
    (problem,) = smoke.check("aws-python-keepalive", answer(FULL_OK, log="START\nEND\n"))
    assert "patched botocore" in problem
    (problem,) = smoke.check("aws-python-keepalive", answer({"errorMessage": "boom"}, error="Unhandled"))
    assert "the function failed" in problem and "boom" in problem
    runtime = dict(FULL_OK, botocore_file="/var/lang/lib/python3.13/site-packages/botocore/__init__.py")
    (problem,) = smoke.check("aws-python-keepalive", answer(runtime))
    assert "not the layer's botocore" in problem


def test_the_function_is_deleted_when_the_invoke_fails(release, moto_endpoint, tmp_path):
    """Against moto (whose invoke fails here: no Docker), smoke.py tries every runtime (3.10-3.14) and
    architecture the layer version declares, reports FAIL for each, exits 1, and leaves no function
    behind."""
    variables = env(AWS_ENDPOINT_URL=moto_endpoint)
    lam = boto3.client("lambda", region_name="us-east-1", endpoint_url=moto_endpoint,
                       aws_access_key_id="test", aws_secret_access_key="test")
    hook_zip = next(os.path.join(release, f) for f in os.listdir(release)
                    if f.startswith("aws-python-keepalive-hook-") and f.endswith(".zip"))
    arn = lam.publish_layer_version(LayerName="smoke-%s" % tmp_path.name[-8:],
                                    Content={"ZipFile": open(hook_zip, "rb").read()},
                                    CompatibleRuntimes=list(layer_info.RUNTIMES),
                                    CompatibleArchitectures=list(layer_info.ARCHITECTURES))["LayerVersionArn"]
    role = boto3.client("iam", region_name="us-east-1", endpoint_url=moto_endpoint, aws_access_key_id="test",
                        aws_secret_access_key="test").create_role(
        RoleName="smoke-%s" % tmp_path.name[-8:], AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    layers_json = tmp_path / "layers.json"
    layers_json.write_text(json.dumps({"aws-python-keepalive-hook": {"us-east-1": arn}}))
    before = {f["FunctionName"] for f in lam.list_functions()["Functions"]}
    completed = subprocess.run([sys.executable, os.path.join(REPO, "tools", "release", "smoke.py"), "--layers-json",
                                str(layers_json), "--region", "us-east-1", "--role-arn", role],
                               capture_output=True, text=True, env=variables)
    assert completed.returncode == 1, completed.stdout + completed.stderr
    tried = [line.split()[3:5] for line in completed.stdout.splitlines() if line.startswith(("ok", "FAIL"))]
    assert all(line.startswith("FAIL") for line in completed.stdout.splitlines() if line.startswith(("ok", "FAIL")))
    assert sorted(tried) == sorted([runtime, architecture] for runtime in layer_info.RUNTIMES
                                   for architecture in layer_info.ARCHITECTURES)
    assert len(tried) == 10
    assert {f["FunctionName"] for f in lam.list_functions()["Functions"]} == before


def test_no_layer_in_the_region_is_an_error(tmp_path):
    """A layers.json without the smoke region stops at once, naming the region."""
    layers_json = tmp_path / "layers.json"
    layers_json.write_text(json.dumps({"aws-python-keepalive": {"eu-west-1": "arn:aws:lambda:eu-west-1:1:layer:a:1"}}))
    completed = subprocess.run([sys.executable, os.path.join(REPO, "tools", "release", "smoke.py"), "--layers-json",
                                str(layers_json), "--region", "us-east-1", "--role-arn", "r"],
                               capture_output=True, text=True, env=env())
    assert completed.returncode == 1 and "no layer in us-east-1" in completed.stderr
