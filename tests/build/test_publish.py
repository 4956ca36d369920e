"""`make publish` (tools/release/publish.py, tools/release/regions.py) against a local moto server standing in for
Lambda, SSM and EC2: every flavor into every region, idempotent, permissions and SSM parameters
ensured, layers.json recorded, partitions and disabled regions handled."""

import io
import json
import os
import shutil
import subprocess
import sys

import boto3
import botocore.exceptions
import pytest
from conftest import REPO, env

from tools.build import layer_info
from tools.release import publish
from tools.release import regions

REGIONS = ("us-east-1", "eu-west-1", "ap-southeast-2")


def run_make(endpoint, release_dir, *arguments):
    """`make publish` on an already made release (BUILD_DIR is its parent); returns the completed run."""
    command = ["make", "--no-print-directory", "-C", REPO, "publish",
               "BUILD_DIR=%s" % os.path.dirname(release_dir)] + list(arguments)
    return subprocess.run(command, capture_output=True, text=True, env=env(AWS_ENDPOINT_URL=endpoint))


def make_publish(endpoint, release_dir, *arguments):
    """`make publish` that must succeed; returns {arn: status} from its output lines."""
    completed = run_make(endpoint, release_dir, *arguments)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return {line.split()[1]: line.split()[0] for line in completed.stdout.splitlines()
            if line.split()[:1] in (["published"], ["unchanged"])}


def client(service, endpoint, region):
    return boto3.client(service, region_name=region, endpoint_url=endpoint,
                        aws_access_key_id="test", aws_secret_access_key="test")


def copy_release(release, tmp_path):
    """A private copy of the release folder (each test writes its own layers.json)."""
    folder = str(tmp_path / "build" / "release")
    shutil.copytree(release, folder)
    return folder


def policy_statements(lambda_client, name, version):
    try:
        policy = lambda_client.get_layer_version_policy(LayerName=name, VersionNumber=version)["Policy"]
    except botocore.exceptions.ClientError as error:
        assert error.response["Error"]["Code"] == "ResourceNotFoundException"
        return []
    return json.loads(policy)["Statement"]


def test_publish_every_flavor_to_every_region_then_nothing_new(release, moto_endpoint, tmp_path):
    """FLAVOR=all PUBLIC=1 into three regions: each layer version has the runtimes, architectures,
    license, the zip's description and bytes, the public grant, both SSM parameters and its line in
    layers.json; the same command again publishes nothing and the versions stay 1."""
    folder = copy_release(release, tmp_path)
    base = "every-%s" % tmp_path.name[-12:]
    args = ("REGIONS=%s" % " ".join(REGIONS), "FLAVOR=all", "PUBLIC=1", "LAYER_NAME=%s" % base)
    first = make_publish(moto_endpoint, folder, *args)
    assert sorted(first.values()) == ["published"] * 6
    table = json.load(open(os.path.join(folder, "layers.json")))
    assert sorted(table) == [base, base + "-hook"]
    zips = {base: "aws-python-keepalive-", base + "-hook": "aws-python-keepalive-hook-"}
    for name, prefix in zips.items():
        path = os.path.join(folder, next(f for f in sorted(os.listdir(folder))
                                         if f.startswith(prefix) and f.endswith(".zip") and
                                         (name.endswith("-hook") or "-hook-" not in f)))
        assert sorted(table[name]) == sorted(REGIONS)
        for region in REGIONS:
            arn = table[name][region]
            assert arn.startswith("arn:aws:lambda:%s:" % region) and arn.endswith(":layer:%s:1" % name)
            assert first[arn] == "published"
            lam = client("lambda", moto_endpoint, region)
            version = lam.get_layer_version(LayerName=name, VersionNumber=1)
            assert version["CompatibleRuntimes"] == list(layer_info.RUNTIMES)
            assert version["CompatibleArchitectures"] == list(layer_info.ARCHITECTURES)
            assert version["LicenseInfo"] == layer_info.LICENSE
            assert version["Description"] == layer_info.description_from_zip(path)
            assert version["Content"]["CodeSha256"] == publish.Layer(name, path).code_sha256
            (statement,) = policy_statements(lam, name, 1)
            assert statement["Principal"] == "*" and statement["Action"] == "lambda:GetLayerVersion"
            ssm = client("ssm", moto_endpoint, region)
            for parameter in ("latest", layer_info.hook_version_from_source(
                    open(os.path.join(REPO, "layer", "aws_keepalive", "__init__.py")).read())):
                value = ssm.get_parameter(Name="/python-keepalive/%s/%s" % (name, parameter))["Parameter"]["Value"]
                assert value == arn
    again = make_publish(moto_endpoint, folder, *args)
    assert again == {arn: "unchanged" for arn in first}
    for region in REGIONS:
        versions = client("lambda", moto_endpoint, region).list_layer_versions(LayerName=base)["LayerVersions"]
        assert [v["Version"] for v in versions] == [1]


def test_private_then_public_grants_on_the_unchanged_version(release, moto_endpoint, tmp_path):
    """Without PUBLIC the version has no grant; a rerun with PUBLIC=1 publishes nothing but adds the
    grant to the existing version (a region published but never made public gets fixed)."""
    folder = copy_release(release, tmp_path)
    name = "private-%s" % tmp_path.name[-12:]
    (arn,) = make_publish(moto_endpoint, folder, "REGIONS=eu-west-1", "FLAVOR=hook", "LAYER_NAME=%s" % name)
    lam = client("lambda", moto_endpoint, "eu-west-1")
    assert policy_statements(lam, name + "-hook", 1) == []
    assert make_publish(moto_endpoint, folder, "REGIONS=eu-west-1", "FLAVOR=hook", "LAYER_NAME=%s" % name,
                        "PUBLIC=1") == {arn: "unchanged"}
    (statement,) = policy_statements(lam, name + "-hook", 1)
    assert statement["Sid"] == publish.PUBLIC_STATEMENT_ID and statement["Principal"] == "*"


def test_organization_only(release, moto_endpoint, tmp_path):
    """PRINCIPAL_ORG=o-... grants read to that organization's accounts only (the OrganizationId
    condition), not to everyone; PUBLIC=1 with it is refused."""
    folder = copy_release(release, tmp_path)
    name = "org-%s" % tmp_path.name[-12:]
    make_publish(moto_endpoint, folder, "REGIONS=us-east-1", "FLAVOR=hook", "LAYER_NAME=%s" % name,
                 "PRINCIPAL_ORG=o-a1b2c3d4e5")
    (statement,) = policy_statements(client("lambda", moto_endpoint, "us-east-1"), name + "-hook", 1)
    assert statement["Sid"] == publish.ORG_STATEMENT_ID
    assert "o-a1b2c3d4e5" in json.dumps(statement)
    refused = run_make(moto_endpoint, folder, "REGIONS=us-east-1", "FLAVOR=hook", "PUBLIC=1",
                       "PRINCIPAL_ORG=o-a1b2c3d4e5")
    assert refused.returncode != 0 and "give one" in refused.stderr


def test_a_changed_zip_is_a_new_version_and_moves_latest(release, moto_endpoint, tmp_path):
    """A zip whose bytes differ from the latest version's is published as version 2; the latest and
    the release's SSM parameters then name version 2."""
    folder = copy_release(release, tmp_path)
    name = "changed-%s" % tmp_path.name[-12:]
    hook_zip = next(os.path.join(folder, f) for f in os.listdir(folder) if f.startswith("aws-python-keepalive-hook-")
                    and f.endswith(".zip"))
    make_publish(moto_endpoint, folder, "REGIONS=us-east-1", "FLAVOR=hook", "LAYER_NAME=%s" % name)
    with open(hook_zip, "ab") as handle:  # still a zip (trailing bytes after the directory are allowed)
        handle.write(b"\0")
    # the tool itself: make would rebuild the release over the changed zip
    completed = tool_run(moto_endpoint, "--layer", "%s-hook=%s" % (name, hook_zip), "--regions", "us-east-1",
                         "--layers-json", os.path.join(folder, "layers.json"))
    assert completed.returncode == 0, completed.stderr
    arn = json.load(open(os.path.join(folder, "layers.json")))[name + "-hook"]["us-east-1"]
    assert arn.endswith(":%s-hook:2" % name)
    assert client("ssm", moto_endpoint, "us-east-1").get_parameter(
        Name="/python-keepalive/%s-hook/latest" % name)["Parameter"]["Value"] == arn


def tool_run(endpoint, *arguments):
    """tools/release/publish.py itself (arguments make does not pass, e.g. --regions-file)."""
    return subprocess.run([sys.executable, os.path.join(REPO, "tools", "release", "publish.py")] + list(arguments),
                          capture_output=True, text=True, env=env(AWS_ENDPOINT_URL=endpoint))


def test_all_skips_the_regions_the_account_has_not_enabled(release, moto_endpoint, tmp_path):
    """REGIONS=all takes the regions file's list and skips, saying so, the ones EC2 DescribeRegions
    reports as not-opted-in (moto: ap-east-1); the others are published."""
    regions_file = tmp_path / "regions.json"
    regions_file.write_text(json.dumps({"partitions": {"aws": ["ap-east-1", "eu-north-1"]}}))
    hook_zip = next(os.path.join(release, f) for f in os.listdir(release)
                    if f.startswith("aws-python-keepalive-hook-") and f.endswith(".zip"))
    completed = tool_run(moto_endpoint, "--layer", "all-%s=%s" % (tmp_path.name[-12:], hook_zip), "--regions", "all",
                         "--regions-file", str(regions_file), "--layers-json", str(tmp_path / "layers.json"))
    assert completed.returncode == 0, completed.stderr
    assert "skipped ap-east-1: not enabled in this account" in completed.stderr
    (table,) = json.load(open(tmp_path / "layers.json")).values()
    assert sorted(table) == ["eu-north-1"]


def test_other_partition_gets_its_own_arn_format(release, moto_endpoint, tmp_path):
    """PARTITION=aws-cn publishes to the China regions with arn:aws-cn:lambda ARNs; a region of another
    partition is refused before anything is published."""
    folder = copy_release(release, tmp_path)
    name = "cn-%s" % tmp_path.name[-12:]
    (arn,) = make_publish(moto_endpoint, folder, "REGIONS=cn-north-1", "FLAVOR=hook", "PARTITION=aws-cn",
                          "LAYER_NAME=%s" % name)
    assert arn.startswith("arn:aws-cn:lambda:cn-north-1:")
    refused = run_make(moto_endpoint, folder, "REGIONS=cn-north-1 us-east-1", "FLAVOR=hook", "PARTITION=aws-cn")
    assert refused.returncode != 0 and "not in partition aws-cn: us-east-1 (aws)" in refused.stderr


def test_refused_settings(release, tmp_path):
    """No region, an SSM prefix SSM reserves, half a signing setup: each refused with a message."""
    folder = copy_release(release, tmp_path)
    for arguments, message in [(("REGIONS=",), "no region"),
                               (("SSM_PREFIX=/aws-layers",), "SSM reserves"),
                               (("SIGNING_PROFILE=p",), "signing needs both")]:
        completed = run_make("http://127.0.0.1:9", folder, "FLAVOR=hook", *arguments)
        assert completed.returncode != 0 and message in completed.stderr, completed.stderr


def test_regions_file_refreshes_from_ssm_and_botocore(moto_endpoint, tmp_path):
    """`make regions` writes each partition's Lambda regions from the SSM global-infrastructure tree
    (moto serves AWS's copy of it) or, offline, from botocore; the committed file has the aws
    partition's 30+ regions and the GovCloud and China ones."""
    for source in ("ssm", "botocore"):
        out = tmp_path / ("%s.json" % source)
        completed = subprocess.run([sys.executable, os.path.join(REPO, "tools", "release", "regions.py"), "--source", source,
                                    "--out", str(out)], capture_output=True, text=True,
                                   env=env(AWS_ENDPOINT_URL=moto_endpoint))
        assert completed.returncode == 0, completed.stderr
        partitions = json.load(open(out))["partitions"]
        assert {"us-east-1", "eu-west-1", "ap-southeast-2"} <= set(partitions["aws"])
        assert partitions["aws-us-gov"] == ["us-gov-east-1", "us-gov-west-1"]
        assert partitions["aws-cn"] == ["cn-north-1", "cn-northwest-1"]
        assert not any(p.startswith("aws-iso") for p in partitions)
    committed = regions.load(regions.REGIONS_FILE, "aws")
    assert len(committed) >= 30 and committed == sorted(committed)


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_is_one_line_on_a_terminal_and_a_line_per_region_elsewhere():
    """On a terminal the progress line is rewritten in place (carriage return, erase) and ends with a
    newline after the last region; in a log each finished region gets its own line with the tally."""
    log = io.StringIO()
    progress = publish.Progress(2, stream=log)
    progress.region_done("eu-west-1", "published")
    progress.region_done("us-east-1", "unchanged")
    lines = log.getvalue().splitlines()
    assert [line.split("] ")[1] for line in lines] == ["eu-west-1: published (1 published)",
                                                        "us-east-1: unchanged (1 published, 1 unchanged)"]
    assert lines[1].startswith("[2/2 regions, ")
    terminal = Terminal()
    progress = publish.Progress(2, stream=terminal)
    progress.region_done("eu-west-1", "failed")
    progress.region_done("us-east-1", "skipped")
    assert terminal.getvalue().count("\r\033[K") == 2 and terminal.getvalue().count("\n") == 1
    assert terminal.getvalue().endswith("us-east-1: skipped (1 failed, 1 skipped)\n")
