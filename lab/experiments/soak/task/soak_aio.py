"""The soak's aiobotocore twin of soak_threads.py: 1-64 puts as 1-32 concurrent tasks on one client.

Same checks and report as soak_threads (see its docstring), from the same soak_check.py: UpdateItem
ADD n 1 then a consistent GetItem reading n == 1, RSS and fds, the layer's bookkeeping.  The client lives as long as the
execution environment, on one event loop the handler reuses every invocation -- the way a
function keeps an aiobotocore client between invocations (``asyncio.run`` per invocation would
close the loop and with it every pooled connection, leaving nothing for the layer to do).

This module needs soak_check.py and aiobotocore next to it in the task folder (make soak AIO=1 installs it there
from lab/async-requirements.txt, with the botocore it pins: it shadows the layer's, as in a
real function that bundles aiobotocore).
"""

import asyncio

import soak_check
from aiobotocore.config import AioConfig
from aiobotocore.session import get_session

LOOP = asyncio.new_event_loop()


async def _open_client():
    context = get_session().create_client(
        "dynamodb", config=AioConfig(read_timeout=soak_check.READ_TIMEOUT_S, connect_timeout=2))
    return context, await context.__aenter__()


_context, client = LOOP.run_until_complete(_open_client())


async def _put_and_check(key, limit):
    async with limit:
        record = soak_check.new_record(key)
        try:
            soak_check.updated(record, await client.update_item(**soak_check.update_request(key)))
            soak_check.read_back(record, await client.get_item(**soak_check.read_request(key)))
        except Exception as error:  # a failed put is a result, not a crash of the function
            soak_check.failed(record, error)
        return soak_check.finished(record)


def _bookkeeping():
    """Pooled connections in aiohttp's connector, and those the layer remembers as resting."""
    counts = {"pooled": 0, "stamped": 0, "checked_out": 0}
    for session in (client._endpoint.http_session._sessions or {}).values():
        connector = session.connector
        state = getattr(connector, "_aws_keepalive", None)
        counts["pooled"] += sum(len(entries) for entries in connector._conns.values())
        counts["stamped"] += len(state.resting) if state is not None else 0
        counts["checked_out"] += len(getattr(connector, "_acquired", ()))
    return counts


async def _handle(event):
    limit = asyncio.Semaphore(int(event["threads"]))
    keys = ["%s-%d" % (event["prefix"], index) for index in range(int(event["puts"]))]
    return await asyncio.gather(*(_put_and_check(key, limit) for key in keys))


def handler(event, context):
    puts = LOOP.run_until_complete(_handle(event))
    return {"puts": list(puts), "discards": 0, "bookkeeping": _bookkeeping(),
            "process": soak_check.process()}
