"""Sign a layer zip with AWS Signer, for accounts whose functions enforce a code signing config.

Signer reads its source from S3 and writes the signed zip back to S3, in the region of the
signing profile; Lambda then publishes the signed object.  Per region (publish.py calls ``sign``):

1. the zip goes to ``s3://<bucket>/unsigned/<zip name>``; the bucket must have versioning on
   (Signer takes an object version as its source: checked first, with a clear message);
2. ``StartSigningJob`` with the profile (a profile of platform ``AWSLambda-SHA384-ECDSA``), the
   destination prefix ``signed/``;
3. ``DescribeSigningJob`` every ``poll_s`` until ``Succeeded`` (its ``signedObject`` names the
   signed zip) or ``Failed`` (its ``statusReason`` is the error), at most ``timeout_s``.

The signed zip holds Signer's signature, so its bytes (and Lambda's CodeSha256 of it) differ from
the release zip's: publish.py recognises an already published signed zip by the release's SSM
parameter instead (it records the unsigned zip's sha256 and names the version).
"""

import time

SIGNED_PREFIX = "signed/"
UNSIGNED_PREFIX = "unsigned/"


class SigningError(RuntimeError):
    pass


def upload(s3, bucket, data, name):
    """Put the zip into the (versioned) bucket; returns (key, version id)."""
    versioning = s3.get_bucket_versioning(Bucket=bucket).get("Status")
    if versioning != "Enabled":
        raise SigningError("s3://%s: versioning is %s; AWS Signer needs a versioned source bucket "
                           "(aws s3api put-bucket-versioning --bucket %s --versioning-configuration Status=Enabled)"
                           % (bucket, versioning or "off", bucket))
    key = UNSIGNED_PREFIX + name
    version = s3.put_object(Bucket=bucket, Key=key, Body=data)["VersionId"]
    return key, version


def wait(signer, job_id, poll_s=3.0, timeout_s=600.0, sleep=time.sleep, clock=time.monotonic):
    """Poll the job until it ends; returns its signedObject's s3 {'bucketName', 'key'}."""
    deadline = clock() + timeout_s
    while True:
        job = signer.describe_signing_job(jobId=job_id)
        status = job.get("status")
        if status == "Succeeded":
            return job["signedObject"]["s3"]
        if status == "Failed":
            raise SigningError("signing job %s failed: %s" % (job_id, job.get("statusReason", "no reason given")))
        if clock() >= deadline:
            raise SigningError("signing job %s still %s after %.0f s" % (job_id, status, timeout_s))
        sleep(poll_s)


def sign(s3, signer, bucket, data, name, profile, poll_s=3.0, timeout_s=600.0, sleep=time.sleep):
    """Upload, sign, wait; returns the signed object's s3 location {'bucketName', 'key'}."""
    key, version = upload(s3, bucket, data, name)
    job = signer.start_signing_job(
        source={"s3": {"bucketName": bucket, "key": key, "version": version}},
        destination={"s3": {"bucketName": bucket, "prefix": SIGNED_PREFIX}},
        profileName=profile,
    )
    return wait(signer, job["jobId"], poll_s, timeout_s, sleep)
