"""Signing (tools/release/signing.py, publish.py with --signing-profile): S3 and Lambda are a local moto
server; AWS Signer is not served by moto (5.2.5 has signing profiles, no StartSigningJob or
DescribeSigningJob), so the signer client is a real botocore client with a Stubber: its requests are
validated against Signer's real API model, its answers are queued by the test, and the signed object
it names is written into moto's S3 by the test, as Signer would write it."""

import os

import boto3
import botocore.stub
import pytest

from tools.release import publish
from tools.release import signing

REGION = "us-east-1"


@pytest.fixture
def aws(moto_endpoint, monkeypatch):
    """boto3 in this process pointed at moto, with test credentials."""
    for name, value in {"AWS_ENDPOINT_URL": moto_endpoint, "AWS_ACCESS_KEY_ID": "test",
                        "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": REGION,
                        "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    return moto_endpoint


def bucket(s3, name, versioned=True):
    s3.create_bucket(Bucket=name)
    if versioned:
        s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    return name


class StubbedSigner:
    """A real signer client whose answers the test queues; records the StartSigningJob request."""

    def __init__(self):
        self.client = boto3.client("signer", region_name=REGION)
        self.stubber = botocore.stub.Stubber(self.client)
        self.started = []
        self.client.meta.events.register("provide-client-params.signer.StartSigningJob",
                                         lambda params, **_: self.started.append(params))
        self.stubber.activate()

    def job(self, job_id, statuses, signed_key=None, bucket_name=None, reason=None):
        self.stubber.add_response("start_signing_job", {"jobId": job_id})
        for status in statuses:
            answer = {"jobId": job_id, "status": status}
            if status == "Succeeded":
                answer["signedObject"] = {"s3": {"bucketName": bucket_name, "key": signed_key}}
            if status == "Failed":
                answer["statusReason"] = reason
            self.stubber.add_response("describe_signing_job", answer, {"jobId": job_id})


def test_sign_uploads_the_version_starts_the_job_and_waits(aws, tmp_path):
    """The zip goes to unsigned/<name> in the versioned bucket; the job's source is that object's very
    version, its destination the signed/ prefix, with the profile; polled (sleeping between) until
    Succeeded, whose signed object is returned."""
    s3 = boto3.client("s3", region_name=REGION)
    name = bucket(s3, "sign-ok-%s" % tmp_path.name[-8:].lower().replace("_", "-"))
    signer = StubbedSigner()
    signer.job("job-1", ["InProgress", "InProgress", "Succeeded"], "signed/job-1.zip", name)
    sleeps = []
    signed = signing.sign(s3, signer.client, name, b"zip bytes", "layer.zip", "MyProfile", poll_s=2,
                          sleep=sleeps.append)
    assert signed == {"bucketName": name, "key": "signed/job-1.zip"}
    (request,) = signer.started
    versions = s3.list_object_versions(Bucket=name, Prefix="unsigned/layer.zip")["Versions"]
    assert request["source"] == {"s3": {"bucketName": name, "key": "unsigned/layer.zip",
                                        "version": versions[0]["VersionId"]}}
    assert request["destination"] == {"s3": {"bucketName": name, "prefix": "signed/"}}
    assert request["profileName"] == "MyProfile"
    assert sleeps == [2, 2]
    assert s3.get_object(Bucket=name, Key="unsigned/layer.zip")["Body"].read() == b"zip bytes"
    signer.stubber.assert_no_pending_responses()


def test_sign_refuses_an_unversioned_bucket(aws, tmp_path):
    """Signer needs a versioned source: an unversioned bucket is refused before any upload, naming the
    bucket and the command that turns versioning on."""
    s3 = boto3.client("s3", region_name=REGION)
    name = bucket(s3, "sign-plain-%s" % tmp_path.name[-8:].lower().replace("_", "-"), versioned=False)
    with pytest.raises(signing.SigningError, match="put-bucket-versioning --bucket %s" % name):
        signing.sign(s3, StubbedSigner().client, name, b"zip", "layer.zip", "ReleaseProfile")
    assert "Contents" not in s3.list_objects_v2(Bucket=name)


def test_a_failed_or_endless_job_is_an_error(aws, tmp_path):
    """A Failed job raises with Signer's statusReason; a job still running at the timeout raises too."""
    s3 = boto3.client("s3", region_name=REGION)
    name = bucket(s3, "sign-fail-%s" % tmp_path.name[-8:].lower().replace("_", "-"))
    signer = StubbedSigner()
    signer.job("job-f", ["Failed"], reason="profile revoked")
    with pytest.raises(signing.SigningError, match="profile revoked"):
        signing.sign(s3, signer.client, name, b"zip", "layer.zip", "ReleaseProfile", sleep=lambda s: None)
    signer.job("job-slow", ["InProgress", "InProgress"])
    clock = iter([0.0, 5.0, 11.0]).__next__
    signing_call = signer.client.start_signing_job(
        source={"s3": {"bucketName": name, "key": "k", "version": "v"}},
        destination={"s3": {"bucketName": name}}, profileName="ReleaseProfile")
    with pytest.raises(signing.SigningError, match="still InProgress after 10 s"):
        signing.wait(signer.client, signing_call["jobId"], poll_s=1, timeout_s=10, sleep=lambda s: None, clock=clock)


def test_publish_signed_publishes_the_signed_object_once(aws, release, tmp_path, monkeypatch):
    """With a signing profile, the layer version is made from the signed object in S3 (its CodeSha256 is
    the signed bytes'); a rerun recognises it through the release's SSM parameter and neither signs
    nor publishes again (the stub has no answer queued: a second job would fail the test)."""
    s3 = boto3.client("s3", region_name=REGION)
    name = bucket(s3, "sign-pub-%s" % tmp_path.name[-8:].lower().replace("_", "-"))
    hook_zip = next(os.path.join(release, f) for f in os.listdir(release)
                    if f.startswith("aws-python-keepalive-hook-") and f.endswith(".zip"))
    signed_bytes = open(hook_zip, "rb").read() + b"\0signature"
    s3.put_object(Bucket=name, Key="signed/job-p.zip", Body=signed_bytes)
    signer = StubbedSigner()
    signer.job("job-p", ["Succeeded"], "signed/job-p.zip", name)
    real_client = boto3.session.Session.client
    monkeypatch.setattr(boto3.session.Session, "client", lambda self, service, **kw: signer.client
                        if service == "signer" else real_client(self, service, **kw))
    monkeypatch.setattr(signing.time, "sleep", lambda s: None)
    layer = publish.Layer("signed-%s" % tmp_path.name[-8:], hook_zip)
    options = {"public": False, "organization": "", "ssm_prefix": publish.SSM_PREFIX, "partition": "aws",
               "signing": {"profile": "ReleaseProfile", "bucket": name.replace(REGION, "{region}")}}
    ((layer_name, status, arn),) = publish.publish_region(REGION, [layer], options)
    assert status == "published" and arn.endswith(":%s:1" % layer.name)
    version = boto3.client("lambda", region_name=REGION).get_layer_version(LayerName=layer.name, VersionNumber=1)
    assert version["Content"]["CodeSize"] == len(signed_bytes)
    assert version["Content"]["CodeSha256"] != layer.code_sha256
    assert signer.started[0]["profileName"] == "ReleaseProfile"
    assert publish.publish_region(REGION, [layer], options) == [(layer_name, "unchanged", arn)]
    signer.stubber.assert_no_pending_responses()


def test_a_signed_stage_stopped_after_a_publish_is_re_runnable(aws, release, tmp_path, monkeypatch):
    """Signing on, two regions: the stage stops in the second right after its publish (nothing else done
    there). The re-run finds the signed version there (the release's parameter was written before the
    publish), publishes and signs nothing, and every region has the one number 1; before, the re-run
    planned version 2 in that region alone and was refused for good."""
    regions = [REGION, "us-west-2"]
    s3s = {region: boto3.client("s3", region_name=region) for region in regions}
    base = "sign-rerun-%s" % tmp_path.name[-8:].lower().replace("_", "-")
    for region in regions:
        s3s[region].create_bucket(Bucket="%s-%s" % (base, region), **(
            {} if region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": region}}))
        s3s[region].put_bucket_versioning(Bucket="%s-%s" % (base, region),
                                          VersioningConfiguration={"Status": "Enabled"})
    hook_zip = next(os.path.join(release, f) for f in os.listdir(release)
                    if f.startswith("aws-python-keepalive-hook-") and f.endswith(".zip"))
    signer = StubbedSigner()
    for region in regions:
        key = "signed/job-%s.zip" % region
        s3s[region].put_object(Bucket="%s-%s" % (base, region), Key=key,
                               Body=open(hook_zip, "rb").read() + b"\0signature " + region.encode())
        signer.job("job-%s" % region, ["Succeeded"], key, "%s-%s" % (base, region))
    real_client = boto3.session.Session.client
    monkeypatch.setattr(boto3.session.Session, "client", lambda self, service, **kw: signer.client
                        if service == "signer" else real_client(self, service, **kw))
    monkeypatch.setattr(signing.time, "sleep", lambda s: None)
    real_clients = publish.clients
    stopped = []

    def stop_after_the_publish(region):
        session, client, ssm = real_clients(region)
        if region == "us-west-2" and not stopped:
            def stop(**_):
                stopped.append(region)
                raise RuntimeError("the run stopped here (a lost connection, a cancelled job)")
            client.meta.events.register("after-call.lambda.PublishLayerVersion", stop)
        return session, client, ssm

    monkeypatch.setattr(publish, "clients", stop_after_the_publish)
    # One region at a time, in order: the signer stub answers its queued jobs in that order.
    layer = publish.Layer("signed-rerun-%s" % tmp_path.name[-8:], hook_zip)
    options = {"public": False, "organization": "", "ssm_prefix": publish.SSM_PREFIX, "partition": "aws",
               "signing": {"profile": "ReleaseProfile", "bucket": base + "-{region}"}}
    first = publish.run([layer], regions, options, jobs=1, step="stage")
    assert stopped == ["us-west-2"] and first["us-west-2"][0] == "failed" and first[REGION][0] == "done"
    assert [v["Version"] for v in boto3.client("lambda", region_name="us-west-2").list_layer_versions(
        LayerName=layer.name)["LayerVersions"]] == [1]
    again = publish.run([layer], regions, options, jobs=1, step="stage")
    assert {region: [(status, arn.rsplit(":", 1)[1]) for _, status, arn in again[region][1]] for region in regions} \
        == {region: [("unchanged", "1")] for region in regions}
    signer.stubber.assert_no_pending_responses()
