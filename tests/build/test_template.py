"""template.yaml and samconfig.toml with the SAM CLI (offline): lint, properties, and `sam build`."""

import json
import os
import subprocess
import zipfile

import pytest
from conftest import REPO, env, tool

from tools.packaging import layer_info


def sam(*args, **extra):
    completed = subprocess.run(
        [tool("AWS_KEEPALIVE_SAM"), *args], cwd=REPO, capture_output=True, text=True,
        env=env(PATH=tool("AWS_KEEPALIVE_SAM_PATH"), **extra),
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return completed.stdout + completed.stderr


@pytest.fixture(scope="module")
def template():
    """template.yaml as data, read with the YAML loader of cfn-lint (it knows !Ref and friends)."""
    python = os.path.join(os.path.dirname(tool("AWS_KEEPALIVE_SAM")), "python")
    code = "import json, sys; from cfnlint.decode import cfn_yaml; print(json.dumps(cfn_yaml.load(sys.argv[1])))"
    completed = subprocess.run([python, "-c", code, os.path.join(REPO, "template.yaml")],
                               capture_output=True, text=True, env=env())
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def test_sam_validate_lint_passes():
    """`sam validate --lint` accepts the template (samconfig turns lint on; asked explicitly too)."""
    assert "is a valid SAM Template" in sam("validate", "--lint")


def test_layer_resource_properties(template):
    """The layer is built by the Makefile, serves python3.10-3.14 on both architectures and is retained."""
    layer = template["Resources"]["KeepAliveLayer"]
    assert layer["Type"] == "AWS::Serverless::LayerVersion"
    assert layer["Metadata"]["BuildMethod"] == "makefile"
    properties = layer["Properties"]
    assert properties["CompatibleRuntimes"] == list(layer_info.RUNTIMES)
    assert properties["CompatibleArchitectures"] == list(layer_info.ARCHITECTURES)
    assert properties["RetentionPolicy"] == "Retain"
    assert properties["ContentUri"] == "."
    assert template["Outputs"]["LayerVersionArn"]["Value"] == {"Ref": "KeepAliveLayer"}


def test_layer_description_names_the_pinned_versions(template):
    """The template's description is the one tools/packaging/layer_info.py derives from the pins and the hook."""
    expected = layer_info.description_from_source(
        os.path.join(REPO, "layer", "requirements.txt"), os.path.join(REPO, "layer", "aws_keepalive", "__init__.py")
    )
    assert template["Resources"]["KeepAliveLayer"]["Properties"]["Description"] == expected, (
        "run `make lock` (or tools/packaging/layer_info.py --write-template template.yaml)"
    )


def test_hook_layer_resource_properties_and_description(template):
    """The hook-only layer: its own name parameter, built by the Makefile, same runtimes and
    architectures, retained, its description the one tools/packaging/layer_info.py gives the hook flavor."""
    layer = template["Resources"]["KeepAliveHookLayer"]
    assert layer["Type"] == "AWS::Serverless::LayerVersion"
    assert layer["Metadata"]["BuildMethod"] == "makefile"
    properties = layer["Properties"]
    assert properties["LayerName"] == {"Ref": "HookLayerName"}
    assert template["Parameters"]["HookLayerName"]["Default"] == layer_info.HOOK_NAME
    assert properties["CompatibleRuntimes"] == list(layer_info.RUNTIMES)
    assert properties["CompatibleArchitectures"] == list(layer_info.ARCHITECTURES)
    assert properties["RetentionPolicy"] == "Retain"
    with open(os.path.join(REPO, "layer", "aws_keepalive", "__init__.py")) as handle:
        version = layer_info.hook_version_from_source(handle.read())
    assert properties["Description"] == layer_info.hook_description(version), (
        "run `make lock` (or tools/packaging/layer_info.py --write-template template.yaml)")
    assert template["Outputs"]["HookLayerVersionArn"]["Value"] == {"Ref": "KeepAliveHookLayer"}


def test_example_is_optional_and_least_privilege(template):
    """The example function, its on-demand table and policy exist only with DeployExample=true; PutItem only."""
    resources = template["Resources"]
    assert template["Parameters"]["DeployExample"]["Default"] == "false"
    for name in ("ExampleFunction", "ExampleTable"):
        assert resources[name]["Condition"] == "WithExample"
    assert resources["ExampleTable"]["Properties"]["BillingMode"] == "PAY_PER_REQUEST"
    function = resources["ExampleFunction"]["Properties"]
    assert function["Layers"] == [{"Ref": "KeepAliveLayer"}]
    assert function["Environment"]["Variables"]["AWS_PYTHON_KEEPALIVE"] == "1"
    assert function["CodeUri"] == "examples/put_item/" and function["Handler"] == "app.handler"
    (statement,) = function["Policies"][0]["Statement"]
    assert statement["Action"] == "dynamodb:PutItem"
    assert statement["Resource"] == {"Fn::GetAtt": ["ExampleTable", "Arn"]}


def test_sam_build_yields_the_same_files_as_the_zip(tmp_path):
    """`sam build` (Makefile targets build-KeepAliveLayer, build-KeepAliveHookLayer) produces exactly
    each zip's file tree, byte for byte."""
    build_dir = tmp_path / "build"
    sam_dir = tmp_path / "sam"
    # BUILD_DIR reaches the Makefile through the environment sam passes to make.
    sam("build", "--build-dir", str(sam_dir), BUILD_DIR=str(build_dir))
    for resource, zip_name in (("KeepAliveLayer", "layer.zip"), ("KeepAliveHookLayer", "layer-hook.zip")):
        artifacts = sam_dir / resource
        built = {}
        for folder, _, files in os.walk(artifacts):
            for name in files:
                path = os.path.join(folder, name)
                with open(path, "rb") as handle:
                    built[os.path.relpath(path, artifacts)] = handle.read()
        with zipfile.ZipFile(build_dir / zip_name) as archive:
            zipped = {info.filename: archive.read(info) for info in archive.infolist() if not info.is_dir()}
        assert sorted(built) == sorted(zipped), resource
        assert built == zipped, resource
    # The example function was built too (sam deploy needs every resource).
    assert (sam_dir / "ExampleFunction" / "app.py").is_file()


# The Managed Instances snippet of docs/shapes-lmi.md ("Attach it"), translated by the SAM CLI's own
# samtranslator into the CloudFormation it deploys: the names there must be the ones SAM knows.
TRANSLATE = r"""
import json, re, sys
from cfnlint.decode import cfn_yaml
from samtranslator.translator.transform import transform
doc = open(sys.argv[1]).read()
section = doc[doc.index(sys.argv[2] if len(sys.argv) > 2 else "## Attach it"):]
snippet = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
template = {"AWSTemplateFormatVersion": "2010-09-09", "Transform": "AWS::Serverless-2016-10-31",
            "Resources": cfn_yaml.loads(snippet)}
for resource in template["Resources"].values():
    if resource["Type"] == "AWS::Serverless::Function":
        resource["Properties"]["CodeUri"] = "s3://bucket/key.zip"
class NoPolicies:
    def load(self):
        return {}
print(json.dumps(transform(template, {}, NoPolicies())["Resources"]))
"""


def test_managed_instances_snippet_translates():
    """The Managed Instances YAML of docs/shapes-lmi.md becomes an AWS::Lambda::CapacityProvider (its VpcConfig) and
    a function whose CapacityProviderConfig names that provider, with the layer and the switch."""
    python = os.path.join(os.path.dirname(tool("AWS_KEEPALIVE_SAM")), "python")
    completed = subprocess.run([python, "-c", TRANSLATE, os.path.join(REPO, "docs", "shapes-lmi.md")],
                               capture_output=True, text=True, env=env(AWS_DEFAULT_REGION="us-east-1"))
    assert completed.returncode == 0, completed.stderr
    resources = json.loads(completed.stdout)
    provider = resources["MyCapacityProvider"]
    assert provider["Type"] == "AWS::Lambda::CapacityProvider"
    assert provider["Properties"]["VpcConfig"]["SubnetIds"]
    function = resources["MyFunction"]["Properties"]
    config = function["CapacityProviderConfig"]["LambdaManagedInstancesCapacityProviderConfig"]
    assert config["CapacityProviderArn"] == {"Fn::GetAtt": ["MyCapacityProvider", "Arn"]}
    assert function["Runtime"] == "python3.13"
    assert function["Environment"]["Variables"] == {"AWS_PYTHON_KEEPALIVE": "1"}
    assert function["Layers"][0].startswith("arn:aws:lambda:REGION:ACCOUNT:layer:aws-python-keepalive:")


def test_durable_functions_snippet_translates():
    """The durable-function YAML of docs/durable.md ("Attach it") becomes a function with DurableConfig, the
    layer and the switch, and a role with the durable-execution managed policy (SAM adds it when DurableConfig
    is set)."""
    python = os.path.join(os.path.dirname(tool("AWS_KEEPALIVE_SAM")), "python")
    completed = subprocess.run([python, "-c", TRANSLATE, os.path.join(REPO, "docs", "durable.md")],
                               capture_output=True, text=True, env=env(AWS_DEFAULT_REGION="us-east-1"))
    assert completed.returncode == 0, completed.stderr
    resources = json.loads(completed.stdout)
    function = resources["MyDurableFunction"]["Properties"]
    assert function["DurableConfig"] == {"ExecutionTimeout": 86400, "RetentionPeriodInDays": 7}
    assert function["Runtime"] == "python3.13"
    assert function["Environment"]["Variables"] == {"AWS_PYTHON_KEEPALIVE": "1"}
    assert function["Layers"][0].startswith("arn:aws:lambda:REGION:ACCOUNT:layer:aws-python-keepalive:")
    role = resources["MyDurableFunctionRole"]["Properties"]
    assert any(str(arn).endswith("service-role/AWSLambdaBasicDurableExecutionRolePolicy")
               for arn in role["ManagedPolicyArns"]), role["ManagedPolicyArns"]
