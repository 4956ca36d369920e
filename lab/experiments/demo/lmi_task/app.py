"""The ``make demo-lmi`` function: examples/put_item's handler with botocore's read timeout scaled.

One DynamoDB put per invocation through a module-level client, as examples/put_item does, plus the
worker's pid in the result.  The only difference: ``read_timeout`` comes from LAB_READ_TIMEOUT_S.
Behind a NAT that drops silently, a call on a dead pooled connection waits for the read timeout
(botocore's default 60 s) and is then retried; the lab scales time (the NAT's 350 s become a few
seconds), so it scales this 60 s the same way, or one silent-mode round would take minutes.
"""

import os
import time
import uuid

import boto3
from botocore.config import Config

READ_TIMEOUT_S = float(os.environ.get("LAB_READ_TIMEOUT_S", "60"))
dynamodb = boto3.client("dynamodb", config=Config(read_timeout=READ_TIMEOUT_S))
TABLE_NAME = os.environ["TABLE_NAME"]


def handler(event, context):
    """Put one item; returns how long the put took and which worker process served it."""
    started = time.perf_counter()
    dynamodb.put_item(
        TableName=TABLE_NAME,
        Item={"pk": {"S": str(uuid.uuid4())}, "written_at": {"N": repr(time.time())}},
    )
    return {"put_ms": round((time.perf_counter() - started) * 1000, 3), "pid": os.getpid()}
