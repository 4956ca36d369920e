"""`make publish` (tools/publish.py) against a local moto server standing in for Lambda."""

import json
import os
import subprocess

import boto3
import botocore.exceptions
import pytest
from conftest import REPO, env

import layer_info

REGIONS = ("us-east-1", "eu-west-1")


def make_publish(endpoint, build_dir, layer_name, public):
    """Run `make publish` on an already built zip; returns the printed ARNs."""
    command = ["make", "--no-print-directory", "-C", REPO, "publish", "BUILD_DIR=%s" % build_dir,
               "LAYER_NAME=%s" % layer_name, "REGIONS=%s" % " ".join(REGIONS)]
    if public:
        command.append("PUBLIC=1")
    completed = subprocess.run(command, capture_output=True, text=True, env=env(AWS_ENDPOINT_URL=endpoint))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return [line for line in completed.stdout.splitlines() if line.startswith("arn:aws:lambda:")]


def lambda_client(endpoint, region):
    return boto3.client("lambda", region_name=region, endpoint_url=endpoint,
                        aws_access_key_id="test", aws_secret_access_key="test")


@pytest.mark.parametrize("public", [False, True], ids=["private", "public"])
def test_publish_to_each_region(public, layer, moto_endpoint):
    """Each region gets a version with the runtimes, architectures, license and zip-derived description;
    the world may use it only with PUBLIC=1."""
    path = layer[0]
    name = "keepalive-test-%s" % ("public" if public else "private")
    arns = make_publish(moto_endpoint, os.path.dirname(path), name, public)
    assert [arn.split(":")[3] for arn in arns] == list(REGIONS)
    for arn, region in zip(arns, REGIONS):
        client = lambda_client(moto_endpoint, region)
        version = client.get_layer_version(LayerName=name, VersionNumber=int(arn.rsplit(":", 1)[1]))
        assert version["LayerVersionArn"] == arn
        assert version["CompatibleRuntimes"] == list(layer_info.RUNTIMES)
        assert version["CompatibleArchitectures"] == list(layer_info.ARCHITECTURES)
        assert version["LicenseInfo"] == layer_info.LICENSE
        assert version["Description"] == layer_info.description_from_zip(path)
        assert version["Content"]["CodeSize"] == os.path.getsize(path)
        if public:
            policy = json.loads(client.get_layer_version_policy(
                LayerName=name, VersionNumber=version["Version"])["Policy"])
            (statement,) = policy["Statement"]
            assert statement["Principal"] == "*"
            assert statement["Action"] == "lambda:GetLayerVersion"
        else:
            with pytest.raises(botocore.exceptions.ClientError) as error:
                client.get_layer_version_policy(LayerName=name, VersionNumber=version["Version"])
            assert error.value.response["Error"]["Code"] == "ResourceNotFoundException"


def test_publish_refuses_no_region(layer):
    """An empty REGIONS is an error, not a silent no-op."""
    completed = subprocess.run(
        ["make", "--no-print-directory", "-C", REPO, "publish", "BUILD_DIR=%s" % os.path.dirname(layer[0]), "REGIONS="],
        capture_output=True, text=True, env=env(AWS_ENDPOINT_URL="http://127.0.0.1:9"),
    )
    assert completed.returncode != 0
    assert "no region" in completed.stderr


def test_publish_hook_flavor_under_its_own_name(hook_layer, moto_endpoint):
    """`make publish FLAVOR=hook` publishes build/layer-hook.zip as aws-python-keepalive-hook, described
    as the hook flavor, with the same runtimes and architectures."""
    build_dir = os.path.dirname(hook_layer[0])
    completed = subprocess.run(
        ["make", "--no-print-directory", "-C", REPO, "publish", "FLAVOR=hook", "BUILD_DIR=%s" % build_dir,
         "REGIONS=us-east-1"], capture_output=True, text=True, env=env(AWS_ENDPOINT_URL=moto_endpoint))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    (arn,) = [line for line in completed.stdout.splitlines() if line.startswith("arn:aws:lambda:")]
    assert arn.split(":")[6] == layer_info.HOOK_NAME
    version = lambda_client(moto_endpoint, "us-east-1").get_layer_version(
        LayerName=layer_info.HOOK_NAME, VersionNumber=int(arn.rsplit(":", 1)[1]))
    assert version["Description"] == layer_info.description_from_zip(hook_layer[0])
    assert version["Description"].startswith(layer_info.HOOK_NAME + " ")
    assert version["CompatibleRuntimes"] == list(layer_info.RUNTIMES)
    assert version["Content"]["CodeSize"] == os.path.getsize(hook_layer[0])
