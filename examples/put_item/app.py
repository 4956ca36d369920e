"""Example function: one DynamoDB put per invocation through a module-level client.

The client is created once per execution environment (at import, during the cold start) and reused
by every invocation, so its pooled connection is what the keep-alive layer keeps usable between
invocations.  Attach the layer and set AWS_PYTHON_KEEPALIVE=1; the code itself changes nothing.

Environment: TABLE_NAME (a table whose partition key is the string attribute ``pk``).  The endpoint
is never hardcoded: AWS_ENDPOINT_URL_DYNAMODB points the client elsewhere (the lab does).
"""

import os
import time
import uuid

import boto3

dynamodb = boto3.client("dynamodb")
TABLE_NAME = os.environ["TABLE_NAME"]


def _put():
    started = time.perf_counter()
    dynamodb.put_item(
        TableName=TABLE_NAME,
        Item={"pk": {"S": str(uuid.uuid4())}, "written_at": {"N": repr(time.time())}},
    )
    return round((time.perf_counter() - started) * 1000, 3)


def handler(event, context):
    """Put one item; returns how long the put took."""
    return {"put_ms": _put()}


def handler_ten(event, context):
    """Put ten items one after the other; returns each put's duration and the total."""
    started = time.perf_counter()
    puts = [_put() for _ in range(10)]
    return {"put_ms": puts, "total_ms": round((time.perf_counter() - started) * 1000, 3)}
