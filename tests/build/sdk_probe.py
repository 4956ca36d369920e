"""What the full layer's SDK patches (layer/patches/) must leave as stock has it, printed as JSON.

Run as a script by tests/build/test_patched_sdk.py, once with the layer's patched tree first on
PYTHONPATH and once with the stock wheels (the test venv's own boto3/botocore, the same pinned
versions); the test compares the two outputs.  Everything the patches made lazy is read here, so
that what a function (or a tool: Sphinx, help(), OpenTelemetry) sees is compared, not how it got
there: client, paginator and waiter docstrings, resource action and collection docstrings,
ServiceDocumenter output (botocore's and boto3's), boto3.compat's names, TransferConfig and the S3
transfer methods, timestamp and credential-expiry parsing, and a multipart S3 upload and download
with a TransferConfig (threads) against a local S3 (argv[1], a moto server; "" skips it).

Also printed (not compared): which of the modules the patches keep out of ``import boto3`` +
the first client were imported by then, and whether this tree is the patched one.
"""

import hashlib
import json
import os
import re
import sys
import tempfile

LAZY = ("s3transfer", "multiprocessing", "concurrent.futures.thread", "importlib.metadata", "botocore.docs.method",
        "boto3.docs.action", "dateutil.parser")


def digest(value):
    if isinstance(value, str):
        value = value.encode()
    return hashlib.sha256(value).hexdigest()


def main(endpoint):
    import boto3

    client = boto3.client("dynamodb", region_name="us-east-1")
    result = {"imported_at_first_client": sorted(name for name in LAZY if name in sys.modules)}
    import boto3.compat

    result["patched"] = "TransferConfig" not in vars(boto3.compat)
    result["client docstrings"] = [digest(str(client.put_item.__doc__)),
                                   digest(str(client.get_paginator("scan").paginate.__doc__)),
                                   digest(str(client.get_waiter("table_exists").wait.__doc__))]
    table = boto3.resource("dynamodb", region_name="us-east-1").Table("t")
    queue = boto3.resource("sqs", region_name="us-east-1").Queue("https://sqs.us-east-1.amazonaws.com/1/q")
    result["resource docstrings"] = [digest(str(table.put_item.__doc__)), digest(str(table.reload.__doc__)),
                                     digest(str(queue.receive_messages.__doc__)),
                                     digest(str(boto3.resource("sqs", region_name="us-east-1").queues.__doc__))]
    import botocore.docs
    import botocore.session
    from boto3.docs import ServiceDocumenter as Boto3Documenter
    from botocore.docs import ServiceDocumenter

    with tempfile.TemporaryDirectory() as folder:
        result["botocore ServiceDocumenter"] = digest(
            ServiceDocumenter("sqs", botocore.session.get_session(), folder).document_service())
        result["boto3 ServiceDocumenter"] = digest(
            Boto3Documenter("sqs", boto3.Session(region_name="us-east-1"), folder).document_service())
        result["botocore.docs names"] = sorted(name for name in ("ServiceDocumenter", "generate_docs",
                                                                 "DEPRECATED_SERVICE_NAMES")
                                               if hasattr(botocore.docs, name))
    from boto3.compat import TRANSFER_CONFIG_SUPPORTS_CRT, TransferConfig
    from boto3.s3.transfer import TransferConfig as Boto3TransferConfig

    result["compat"] = [TRANSFER_CONFIG_SUPPORTS_CRT, TransferConfig.__module__ + "." + TransferConfig.__qualname__]
    config = Boto3TransferConfig(multipart_threshold=5 * 1024 * 1024, multipart_chunksize=5 * 1024 * 1024,
                                 max_concurrency=4, use_threads=True)
    # (s3transfer's UNSET_DEFAULT sentinel prints its address: the address is cut.)
    result["TransferConfig"] = sorted((key, re.sub(" at 0x[0-9a-f]+", "", repr(value)))
                                      for key, value in vars(config).items())
    s3 = boto3.client("s3", region_name="us-east-1", endpoint_url=endpoint or None)
    result["s3 transfer methods"] = sorted(name for name in ("upload_file", "download_file", "upload_fileobj",
                                                             "download_fileobj", "copy") if hasattr(s3, name))
    from botocore import credentials, utils

    result["timestamps"] = [utils.parse_timestamp(value).isoformat() for value in
                            ("2026-11-28T08:00:00Z", "Sat, 28 Nov 2026 08:00:00 GMT", "1795852800")]
    result["credential expiry"] = credentials._parse_if_needed("2026-11-28T08:00:00+01:00").isoformat()
    if endpoint:
        result["s3 upload"] = upload(s3, config)
    return result


def upload(s3, config):
    """A 12 MiB multipart upload and download with ``config`` (threads): what S3 stored and what came back."""
    bucket = "sdk-probe"
    s3.create_bucket(Bucket=bucket)
    data = bytes(range(256)) * (12 * 4096)
    with tempfile.TemporaryDirectory() as folder:
        source, copy = os.path.join(folder, "source"), os.path.join(folder, "copy")
        with open(source, "wb") as out:
            out.write(data)
        s3.upload_file(source, bucket, "object", Config=config)
        s3.download_file(bucket, "object", copy, Config=config)
        with open(copy, "rb") as handle:
            back = handle.read()
    head = s3.head_object(Bucket=bucket, Key="object")
    s3.delete_object(Bucket=bucket, Key="object")
    s3.delete_bucket(Bucket=bucket)
    return {"etag": head["ETag"], "length": head["ContentLength"], "round trip": back == data}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1] if len(sys.argv) > 1 else ""), sort_keys=True))
