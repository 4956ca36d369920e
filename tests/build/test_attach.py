"""docs/attach.md: each snippet, run through its own tool as far as that tool runs offline.

SAM: `sam validate --lint`; CloudFormation: cfn-lint; CDK (Python): synthesized with aws-cdk-lib;
Serverless Framework 3: `serverless print` with the ARN as a parameter; Terraform: `terraform fmt
-check` where terraform is installed (`terraform validate` needs the AWS provider from the Terraform
registry, which this machine cannot reach)."""

import json
import os
import re
import shutil
import subprocess

import pytest
from conftest import REPO, env, tool

ARN = "arn:aws:lambda:us-east-1:123456789012:layer:aws-python-keepalive:7"
SSM_NAME = "/python-keepalive/aws-python-keepalive/latest"


def snippets():
    """{name: text} of the doc's blocks marked `<!-- check: name -->`."""
    with open(os.path.join(REPO, "docs", "attach.md")) as handle:
        return dict(re.findall(r"<!-- check: (\w+) -->\n```\w+\n(.*?)```", handle.read(), re.DOTALL))


def test_every_tool_has_its_snippet():
    """The doc holds one checked snippet for each tool the issue names."""
    assert sorted(snippets()) == ["cdk", "cloudformation", "sam", "serverless", "terraform"]


def run(argv, cwd, **extra):
    completed = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env(**extra), timeout=600)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed.stdout


def test_sam_snippet_translates_and_lints(tmp_path):
    """The SAM snippet passes `sam validate --lint` (translator + cfn-lint)."""
    (tmp_path / "template.yaml").write_text(snippets()["sam"])
    run([tool("AWS_KEEPALIVE_SAM"), "validate", "--lint", "--region", "us-east-1"], tmp_path,
        PATH=tool("AWS_KEEPALIVE_SAM_PATH"))


def test_cloudformation_snippet_lints(tmp_path):
    """The CloudFormation snippet, with its {{resolve:ssm:...}} layer, passes cfn-lint."""
    (tmp_path / "template.yaml").write_text(snippets()["cloudformation"])
    assert "{{resolve:ssm:%s}}" % SSM_NAME in snippets()["cloudformation"]
    run([os.path.join(os.path.dirname(tool("AWS_KEEPALIVE_SAM")), "cfn-lint"), "template.yaml"], tmp_path)


@pytest.mark.parametrize("context", [None, ARN], ids=["ssm", "arn"])
def test_cdk_snippet_synthesizes_the_layer(tmp_path, context):
    """The CDK app synthesizes a function with AWS_PYTHON_KEEPALIVE=1 whose layer is the ARN given as
    context, or else the SSM parameter (a template parameter of type AWS::SSM::Parameter::Value)."""
    (tmp_path / "app.py").write_text(snippets()["cdk"])
    extra = {"CDK_OUTDIR": str(tmp_path / "out")}
    if context:
        extra["CDK_CONTEXT_JSON"] = json.dumps({"keepalive_layer_arn": context})
    run([tool("AWS_KEEPALIVE_CDK_PYTHON"), "app.py"], tmp_path, **extra)
    template = json.load(open(tmp_path / "out" / "MyStack.template.json"))
    (function,) = [r["Properties"] for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::Function"]
    assert function["Environment"]["Variables"] == {"AWS_PYTHON_KEEPALIVE": "1"}
    (layer,) = function["Layers"]
    if context:
        assert layer == ARN
    else:
        parameter = template["Parameters"][layer["Ref"]]
        assert parameter == {"Type": "AWS::SSM::Parameter::Value<String>", "Default": SSM_NAME}


def test_serverless_snippet_resolves_the_layer(tmp_path):
    """`serverless print` (Serverless Framework 3) resolves the function's layer to the ARN passed as a
    parameter, with the switch in the provider's environment."""
    (tmp_path / "serverless.yml").write_text(snippets()["serverless"])
    printed = run([tool("AWS_KEEPALIVE_SERVERLESS"), "print", "--param", "keepaliveLayerArn=%s" % ARN], tmp_path,
                  HOME=str(tmp_path), SLS_TELEMETRY_DISABLED="1", SLS_NOTIFICATIONS_MODE="off")
    assert re.search(r"^    layers:\n      - %s$" % re.escape(ARN), printed, re.MULTILINE), printed
    assert "AWS_PYTHON_KEEPALIVE: '1'" in printed


def test_terraform_snippet_is_well_formed(tmp_path):
    """`terraform fmt -check` accepts the Terraform snippet (syntax and canonical formatting)."""
    terraform = shutil.which("terraform")
    if terraform is None:
        pytest.skip("terraform is not installed here (not on apt by default); the snippet was not checked")
    (tmp_path / "main.tf").write_text(snippets()["terraform"])
    run([terraform, "fmt", "-check", "-diff", "main.tf"], tmp_path)
    assert "layers        = [var.keepalive_layer_arn]" in snippets()["terraform"]
