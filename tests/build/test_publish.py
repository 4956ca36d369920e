"""`make publish` (tools/release/publish.py, tools/release/regions.py) against a local moto server standing in for
Lambda, SSM and EC2: every flavor into every region, idempotent, permissions and SSM parameters
ensured, layers.json recorded, partitions and disabled regions handled."""

import io
import json
import os
import shutil
import subprocess
import sys
import zipfile

import boto3
import botocore.exceptions
import pytest
from conftest import REPO, env, tool

from tools.packaging import layer_info
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


def tool_run(endpoint, *arguments, env_extra=None):
    """tools/release/publish.py itself (arguments make does not pass, e.g. --regions-file)."""
    return subprocess.run([sys.executable, os.path.join(REPO, "tools", "release", "publish.py")] + list(arguments),
                          capture_output=True, text=True, env=env(AWS_ENDPOINT_URL=endpoint, **(env_extra or {})))


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
        script = os.path.join(REPO, "tools", "release", "regions.py")
        completed = subprocess.run([sys.executable, script, "--source", source, "--out", str(out)],
                                   capture_output=True, text=True,
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


class RefusingProxy:
    """A loopback stand-in for what moto never answers: AWS refusing credentials. Requests signed with
    the access key ``refused_key``, or for a region of ``refused_regions`` (an opt-in region this
    account has not enabled), get the refusal each service really sends (Lambda and SSM:
    UnrecognizedClientException, JSON; STS and EC2: InvalidClientTokenId / AuthFailure, XML);
    everything else is passed to moto. Records the (region, service) of every request."""

    def __init__(self, moto, refused_key=None, refused_regions=()):
        import http.server
        import threading
        import urllib.request
        proxy = self
        self.requests = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self, status, headers, body):
                self.send_response(status)
                for name, value in headers:
                    if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def relay(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                scope = self.headers.get("Authorization", "").split("Credential=")[-1].split(",")[0].split("/")
                key, region, service = scope[0], scope[2], scope[3]
                proxy.requests.append((region, service))
                if key == refused_key or region in refused_regions:
                    if service in ("lambda", "ssm"):
                        return self.answer(403, [("Content-Type", "application/x-amz-json-1.1"),
                                                 ("x-amzn-ErrorType", "UnrecognizedClientException")],
                                           json.dumps({"__type": "UnrecognizedClientException", "message":
                                                       "The security token included in the request is invalid."}
                                                      ).encode())
                    code = "AuthFailure" if service == "ec2" else "InvalidClientTokenId"
                    return self.answer(403, [("Content-Type", "text/xml")], (
                        "<ErrorResponse><Error><Type>Sender</Type><Code>%s</Code><Message>The security token "
                        "included in the request is invalid.</Message></Error></ErrorResponse>" % code).encode())
                request = urllib.request.Request(moto + self.path, data=body or None, method=self.command,
                                                 headers={k: v for k, v in self.headers.items() if k.lower() != "host"})
                try:
                    with urllib.request.urlopen(request, timeout=60) as response:
                        self.answer(response.status, response.getheaders(), response.read())
                except urllib.error.HTTPError as error:
                    self.answer(error.code, error.headers.items(), error.read())

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = relay

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def refusing(moto_endpoint):
    """RefusingProxy(refused_key=..., refused_regions=...) in front of the session's moto server."""
    proxies = []

    def make(**kwargs):
        proxies.append(RefusingProxy(moto_endpoint, **kwargs))
        return proxies[-1]
    yield make
    for proxy in proxies:
        proxy.close()


def hook_zip_of(folder):
    return next(os.path.join(folder, f) for f in sorted(os.listdir(folder))
                if f.startswith("aws-python-keepalive-hook-") and f.endswith(".zip"))


def test_rejected_credentials_fail_the_run_naming_the_cause(release, refusing, tmp_path):
    """Credentials AWS does not know (Lambda: UnrecognizedClientException, STS: InvalidClientTokenId)
    stop `make publish` with exit 1 and a message naming the answer, after one request (STS), before
    any region: nothing is 'skipped', nothing published, layers.json gets no entry."""
    folder = copy_release(release, tmp_path)
    proxy = refusing(refused_key="AKIDREJECTED")
    command = ["make", "--no-print-directory", "-C", REPO, "publish", "BUILD_DIR=%s" % os.path.dirname(folder),
               "REGIONS=us-east-1 eu-west-1", "FLAVOR=all", "PUBLIC=1", "LAYER_NAME=rejected-%s" % tmp_path.name[-8:]]
    completed = subprocess.run(command, capture_output=True, text=True,
                               env=env(AWS_ENDPOINT_URL=proxy.url, AWS_ACCESS_KEY_ID="AKIDREJECTED"))
    assert completed.returncode != 0, completed.stdout + completed.stderr
    assert "credentials were refused by STS in us-east-1 (InvalidClientTokenId" in completed.stderr
    assert "skipped" not in completed.stdout + completed.stderr
    assert proxy.requests == [("us-east-1", "sts")]
    assert not os.path.exists(os.path.join(folder, "layers.json"))


def test_access_denied_fails_the_region_and_the_run(release, tmp_path):
    """Valid credentials without Lambda's permissions (moto with IAM checks on: a user allowed STS and
    SSM only) fail each region named, exit 1, with the answer in the message."""
    import boto3 as aws
    from conftest import free_port, local_server
    argv = [tool("AWS_KEEPALIVE_MOTO"), "-H", "127.0.0.1", "-p", str(free_port())]
    with local_server(argv, tmp_path / "moto.log", "moto server (IAM checks)", INITIAL_NO_AUTH_ACTION_COUNT="3") as url:
        iam = aws.client("iam", region_name="us-east-1", endpoint_url=url, aws_access_key_id="a",
                         aws_secret_access_key="b")
        iam.create_user(UserName="releaser")
        key = iam.create_access_key(UserName="releaser")["AccessKey"]
        iam.put_user_policy(UserName="releaser", PolicyName="no-lambda", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": ["sts:*", "ssm:*", "ec2:*"],
                                                     "Resource": "*"}]}))
        completed = tool_run(url, "--layer", "denied=%s" % hook_zip_of(release), "--regions", "eu-west-1",
                             "--layers-json", str(tmp_path / "layers.json"),
                             env_extra={"AWS_ACCESS_KEY_ID": key["AccessKeyId"],
                                        "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"]})
    assert completed.returncode == 1, completed.stdout + completed.stderr
    (line,) = [line for line in completed.stdout.splitlines() if line.startswith("failed")]
    assert line.startswith("failed    eu-west-1: ClientError") and "403" in line


def test_all_skips_disabled_regions_only_after_the_credentials_proved_good(release, refusing, tmp_path):
    """REGIONS=all: after STS accepted the credentials, a region refusing them (a disabled opt-in
    region's answer) is skipped and listed, the run exits 0; the same region named explicitly fails
    the run (exit 1) and says why."""
    proxy = refusing(refused_regions=("eu-west-3",))
    regions_file = tmp_path / "regions.json"
    regions_file.write_text(json.dumps({"partitions": {"aws": ["eu-north-1", "eu-west-3"]}}))
    name = "optin-%s" % tmp_path.name[-8:]
    every = tool_run(proxy.url, "--layer", "%s=%s" % (name, hook_zip_of(release)), "--regions", "all",
                     "--regions-file", str(regions_file), "--layers-json", str(tmp_path / "layers.json"))
    assert every.returncode == 0, every.stdout + every.stderr
    assert "skipped   eu-west-3: not enabled in this account (UnrecognizedClientException)" in every.stdout
    assert proxy.requests[0] == ("us-east-1", "sts")
    assert sorted(json.load(open(tmp_path / "layers.json"))[name]) == ["eu-north-1"]
    named = tool_run(proxy.url, "--layer", "%s=%s" % (name, hook_zip_of(release)), "--regions",
                     "eu-north-1 eu-west-3", "--layers-json", str(tmp_path / "layers.json"))
    assert named.returncode == 1, named.stdout + named.stderr
    assert "failed    eu-west-3: the credentials were refused here (UnrecognizedClientException)" in named.stdout


def changed_copy(path, tmp_path, tail):
    """A copy of a zip with bytes appended (still a zip): another release's bytes."""
    copy = tmp_path / ("%s-%s" % (tail.hex(), os.path.basename(path)))
    copy.write_bytes(open(path, "rb").read() + tail)
    return str(copy)


def test_rerun_of_an_older_release_publishes_nothing_and_leaves_latest(release, moto_endpoint, tmp_path):
    """Release A is version 1, release B version 2; publishing A again finds it among every version
    (not only the latest): nothing published, `latest` still names version 2."""
    name = "older-%s" % tmp_path.name[-8:]
    old, new = changed_copy(hook_zip_of(release), tmp_path, b"\0"), changed_copy(hook_zip_of(release), tmp_path, b"\1")
    for path in (old, new, old):
        completed = tool_run(moto_endpoint, "--layer", "%s=%s" % (name, path), "--regions", "us-east-1",
                             "--layers-json", str(tmp_path / "layers.json"))
        assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.split()[:2] == ["unchanged", "arn:aws:lambda:us-east-1:123456789012:layer:%s:1" % name]
    lam = client("lambda", moto_endpoint, "us-east-1")
    assert [v["Version"] for v in lam.list_layer_versions(LayerName=name)["LayerVersions"]] == [2, 1]
    latest = client("ssm", moto_endpoint, "us-east-1").get_parameter(Name="/python-keepalive/%s/latest" % name)
    assert latest["Parameter"]["Value"].endswith(":%s:2" % name)


def test_one_release_one_version_number_refused_or_aligned(release, moto_endpoint, tmp_path):
    """A layer at version 2 in us-east-1 and absent from eu-west-1: publishing the next release to both
    is refused before anything is published (3 there, 1 here), saying how to align; with --align,
    eu-west-1 spends two deleted placeholders and the release is version 3 in both."""
    name = "align-%s" % tmp_path.name[-8:]
    for tail in (b"\0", b"\1"):
        assert tool_run(moto_endpoint, "--layer", "%s=%s" % (name, changed_copy(hook_zip_of(release), tmp_path, tail)),
                        "--regions", "us-east-1", "--layers-json", str(tmp_path / "layers.json")).returncode == 0
    args = ("--layer", "%s=%s" % (name, hook_zip_of(release)), "--regions", "us-east-1 eu-west-1",
            "--layers-json", str(tmp_path / "layers.json"))
    refused = tool_run(moto_endpoint, *args)
    assert refused.returncode != 0
    assert "one release is one version number in every region, here 3, but eu-west-1 (next would be 1)" in \
        refused.stderr and "ALIGN=1" in refused.stderr
    east, west = client("lambda", moto_endpoint, "us-east-1"), client("lambda", moto_endpoint, "eu-west-1")
    assert len(east.list_layer_versions(LayerName=name)["LayerVersions"]) == 2
    assert west.list_layer_versions(LayerName=name)["LayerVersions"] == []
    aligned = tool_run(moto_endpoint, *args, "--align")
    assert aligned.returncode == 0, aligned.stdout + aligned.stderr
    assert [v["Version"] for v in west.list_layer_versions(LayerName=name)["LayerVersions"]] == [3]
    table = json.load(open(tmp_path / "layers.json"))[name]
    assert table["us-east-1"].endswith(":3") and table["eu-west-1"].endswith(":3")


def test_staged_private_then_promoted_then_checked(release, moto_endpoint, tmp_path):
    """--step stage publishes a private version (no grant, no `latest`, the release's parameter set);
    check then fails naming what is missing; promote grants and moves `latest`; check passes."""
    name = "staged-%s" % tmp_path.name[-8:]
    args = ("--layer", "%s=%s" % (name, hook_zip_of(release)), "--regions", "eu-west-1", "--public",
            "--layers-json", str(tmp_path / "layers.json"))
    lam, ssm = client("lambda", moto_endpoint, "eu-west-1"), client("ssm", moto_endpoint, "eu-west-1")
    assert tool_run(moto_endpoint, *args, "--step", "stage").returncode == 0
    assert policy_statements(lam, name, 1) == []
    assert ssm.get_parameters(Names=["/python-keepalive/%s/latest" % name])["InvalidParameters"]
    assert json.load(open(tmp_path / "layers.json"))[name]["eu-west-1"].endswith(":%s:1" % name)
    early = tool_run(moto_endpoint, *args, "--step", "check")
    assert early.returncode == 1 and "has no public-get-layer-version grant" in early.stdout
    assert tool_run(moto_endpoint, *args, "--step", "promote").returncode == 0
    (statement,) = policy_statements(lam, name, 1)
    assert statement["Principal"] == "*"
    checked = tool_run(moto_endpoint, *args, "--step", "check")
    assert checked.returncode == 0 and checked.stdout.startswith("checked "), checked.stdout + checked.stderr


def test_make_publish_zip_publishes_a_downloaded_zip(release, moto_endpoint, tmp_path):
    """`make publish ZIP=<a zip anywhere>` publishes that file under the flavor it holds (the
    hook zip -> LAYER_NAME-hook), with no release folder at all, and writes layers.json beside it."""
    downloads = tmp_path / "Downloads"
    downloads.mkdir()
    shutil.copy(hook_zip_of(release), downloads)
    zip_path = str(downloads / os.path.basename(hook_zip_of(release)))
    name = "zip-%s" % tmp_path.name[-8:]
    completed = subprocess.run(["make", "--no-print-directory", "-C", REPO, "publish", "ZIP=%s" % zip_path,
                                "REGIONS=eu-west-1", "LAYER_NAME=%s" % name, "BUILD_DIR=%s" % (tmp_path / "none")],
                               capture_output=True, text=True, env=env(AWS_ENDPOINT_URL=moto_endpoint))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert json.load(open(downloads / "layers.json")) == {
        name + "-hook": {"eu-west-1": "arn:aws:lambda:eu-west-1:123456789012:layer:%s-hook:1" % name}}
    assert not (tmp_path / "none").exists()


def test_a_zip_that_is_no_layer_of_this_project_is_refused_by_name(tmp_path):
    """`make publish ZIP=` with a zip holding no python/aws_keepalive/, or a file that is no zip at all,
    is refused with a message naming the file (not a KeyError/BadZipFile traceback)."""
    other = tmp_path / "aws-python-keepalive-0.1.0.zip"
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("python/x.py", "x = 1\n")
    bogus = tmp_path / "layer.zip"
    bogus.write_text("not a zip\n")
    for path in (other, bogus):
        with pytest.raises(SystemExit) as refused:
            publish.Layer(None, str(path), base="aws-python-keepalive")
        assert str(refused.value).startswith("publish: %s is not an aws-python-keepalive layer zip" % path)
        assert "nothing was published" in str(refused.value)


def publish_zip(endpoint, zip_path, name, tmp_path):
    return subprocess.run(["make", "--no-print-directory", "-C", REPO, "publish", "ZIP=%s" % zip_path,
                           "REGIONS=eu-west-1", "LAYER_NAME=%s" % name, "BUILD_DIR=%s" % (tmp_path / "none")],
                          capture_output=True, text=True, env=env(AWS_ENDPOINT_URL=endpoint))


def test_make_publish_zip_reads_the_flavor_from_the_zip_and_refuses_a_name_that_disagrees(release, moto_endpoint,
                                                                                            tmp_path):
    """`make publish ZIP=build/layer-hook.zip` (make layer FLAVOR=hook's file) publishes LAYER_NAME-hook,
    the flavor read from the zip's contents; the hook zip under a full zip's name, and the full zip
    under the hook's, are refused before anything is published, saying what the zip holds."""
    name = "flavor-%s" % tmp_path.name[-8:]
    (tmp_path / "build").mkdir()
    shutil.copy(hook_zip_of(release), tmp_path / "build" / "layer-hook.zip")
    completed = publish_zip(moto_endpoint, tmp_path / "build" / "layer-hook.zip", name, tmp_path)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert json.load(open(tmp_path / "build" / "layers.json")) == {
        name + "-hook": {"eu-west-1": "arn:aws:lambda:eu-west-1:123456789012:layer:%s-hook:1" % name}}
    full = os.path.join(release, "aws-python-keepalive-%s.zip" % layer_info.zip_info(hook_zip_of(release))["hook"])
    for source, renamed, holds in ((hook_zip_of(release), os.path.basename(full), "hook-only"),
                                   (full, "layer-hook.zip", "full")):
        folder = tmp_path / ("as-" + holds)
        folder.mkdir()
        shutil.copy(source, folder / renamed)
        completed = publish_zip(moto_endpoint, folder / renamed, name, tmp_path)
        assert completed.returncode != 0, completed.stdout
        assert "holds the %s layer" % holds in completed.stderr and "nothing was published" in completed.stderr
        assert not (folder / "layers.json").exists()
    lam = client("lambda", moto_endpoint, "eu-west-1")
    assert [v["Version"] for v in lam.list_layer_versions(LayerName=name + "-hook")["LayerVersions"]] == [1]
    assert lam.list_layer_versions(LayerName=name)["LayerVersions"] == []
