"""Example async function: one DynamoDB put per invocation through an aiobotocore client that lives
as long as the execution environment, so its pooled connection is reused by every invocation.

The pattern, and why each piece is there:

* **One event loop for the environment, made at import.**  ``asyncio.run(handler_body())`` per
  invocation creates a loop and closes it at the end; everything bound to that loop goes with it,
  including aiohttp's connector and its pooled connections.  A client opened inside ``asyncio.run``
  therefore opens a new TCP + TLS connection on every invocation (measured: ``make measure-async``).
  A client opened at module level and then used from ``asyncio.run`` is worse: its connector belongs
  to the first loop, which is closed, and the second invocation fails ("Event loop is closed").
* **The client entered once, at import** (``AsyncExitStack`` at module level): aiobotocore clients
  are async context managers; entering one at import keeps its connector open between invocations.
  Nothing closes it: the environment is frozen and eventually destroyed, as with a boto3 client.
* **The handler runs** ``LOOP.run_until_complete(...)``: the same loop every time, so the connector
  and its connections carry over.  Between invocations the loop does not run at all, so aiohttp's
  own idle timer cannot fire; when the next invocation starts it checks the connection's age first.

Connector settings: none.  aiobotocore's connector already drops a pooled connection idle longer
than its ``keepalive_timeout`` (12 s by default) when it is next taken from the pool, which is the
safe side without the layer.  Raising it (``AioConfig(connector_args={"keepalive_timeout": ...})``)
keeps connections across longer gaps but, without keep-alive probes, also reuses flows a NAT has
forgotten (a reset, then a retry).  With the layer on (AWS_PYTHON_KEEPALIVE=1) the layer keeps the
flow alive and decides when a pooled connection is too old; explicit ``connector_args`` win over it.

Environment: TABLE_NAME (partition key ``pk``, a string).  The endpoint is never hardcoded:
AWS_ENDPOINT_URL_DYNAMODB points the client elsewhere (the lab does).  Bundle aiobotocore with the
function (the lab uses lab/async-requirements.txt).
"""

import asyncio
import contextlib
import os
import time
import uuid

from aiobotocore.session import get_session

TABLE_NAME = os.environ["TABLE_NAME"]

LOOP = asyncio.new_event_loop()
asyncio.set_event_loop(LOOP)
_CLIENTS = contextlib.AsyncExitStack()
dynamodb = LOOP.run_until_complete(_CLIENTS.enter_async_context(get_session().create_client("dynamodb")))


async def _put():
    started = time.perf_counter()
    await dynamodb.put_item(
        TableName=TABLE_NAME,
        Item={"pk": {"S": str(uuid.uuid4())}, "written_at": {"N": repr(time.time())}},
    )
    return round((time.perf_counter() - started) * 1000, 3)


def handler(event, context):
    """Put one item; returns how long the put took."""
    return {"put_ms": LOOP.run_until_complete(_put())}
