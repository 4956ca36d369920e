"""wire.py: the twin's endpoint answers an S3 PUT it does not serve with its 501, over TLS behind
the front, however the client's body and the server's close interleave."""

import tempfile

import boto3
import botocore.config
from pki import PKI
from wire import Wire

CALLS = 12


def test_refused_put_is_answered_not_cut():
    """Stock botocore's put_object (Expect: 100-continue, a chunked body; one attempt, each on a new
    connection: the server closes after answering) gets the server's 501 on every one of CALLS,
    never an SSLError from a connection closed under its body (33 of 40 calls before the server
    read the body of the PUTs it refuses)."""
    pki = PKI(tempfile.mkdtemp())
    wire = Wire(pki.server_context("leaf"))
    outcomes = []
    try:
        made = boto3.session.Session().client(
            "s3", endpoint_url=wire.url, verify=pki.bundle, region_name="us-east-1",
            aws_access_key_id="AKIDTESTWIRE", aws_secret_access_key="test-secret",
            config=botocore.config.Config(retries={"mode": "standard", "max_attempts": 1}))
        for _ in range(CALLS):
            try:
                made.put_object(Bucket="twin", Key="k", Body=b"x")
                outcomes.append("ok")
            except made.exceptions.ClientError as error:
                outcomes.append(error.response["Error"]["Code"])
            except Exception as error:
                outcomes.append("%s: %s" % (type(error).__name__, str(error)[:120]))
        made.close()
    finally:
        wire.close()
    assert outcomes == ["501"] * CALLS, outcomes
