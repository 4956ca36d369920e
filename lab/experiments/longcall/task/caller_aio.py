"""The long call's caller with aiobotocore: the same Invoke as caller.py, through a client entered once
at import on one event loop (examples/async_put_item's pattern), with AWS's advice in its AioConfig.

aiobotocore ignores ``tcp_keepalive`` (its aiohttp connector never reads botocore's socket options),
so AWS's advice reaches no socket here; the layer's aio.py is what sets the timers.
"""

import asyncio
import contextlib
import json
import os
import time

from aiobotocore.config import AioConfig
from aiobotocore.session import get_session
from readback import runs_on, sockets

READ_TIMEOUT_S = float(os.environ["LAB_READ_TIMEOUT_S"])
options = {"read_timeout": READ_TIMEOUT_S, "tcp_keepalive": True}
if os.environ.get("LAB_MAX_ATTEMPTS"):
    options["retries"] = {"total_max_attempts": int(os.environ["LAB_MAX_ATTEMPTS"])}

LOOP = asyncio.new_event_loop()
asyncio.set_event_loop(LOOP)
_CLIENTS = contextlib.AsyncExitStack()
client = LOOP.run_until_complete(_CLIENTS.enter_async_context(
    get_session().create_client("lambda", config=AioConfig(**options))))


async def _invoke(event):
    response = await client.invoke(FunctionName=event.get("callee", "lab-callee"), Payload=json.dumps(event).encode())
    async with response["Payload"] as stream:
        return json.loads(await stream.read())


def timeouts():
    """The client's own timeouts, as the handler runs: the layer must leave them as the user set them."""
    return {"read_timeout": client.meta.config.read_timeout, "connect_timeout": client.meta.config.connect_timeout}


def handler(event, context):
    """Invoke the callee once (RequestResponse); the callee's answer, or the error, and the time."""
    started = time.monotonic()
    try:
        answer = LOOP.run_until_complete(_invoke(event))
    except Exception as error:
        return {"answered": False, "error": type(error).__name__, "detail": str(error)[:300],
                "seconds": round(time.monotonic() - started, 3), "pid": os.getpid(), "timeouts": timeouts(),
                **runs_on()}
    return {"answered": True, "answer": answer, "seconds": round(time.monotonic() - started, 3),
            "pid": os.getpid(), "timeouts": timeouts(), "sockets": sockets(), **runs_on()}
