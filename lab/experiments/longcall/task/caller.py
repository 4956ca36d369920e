"""The long call's caller: a function that invokes another synchronously, the way AWS advises.

The Invoke API's documentation: "Synchronous invocations can run for up to 30 minutes. Set the read
timeout of your client higher than the function timeout, and turn on TCP keep-alive." So the client
is made once, at import, with ``Config(read_timeout=..., tcp_keepalive=True)``; nothing else. The
lab points it at its own Invoke endpoint through ``AWS_ENDPOINT_URL_LAMBDA`` (no code change).

LAB_READ_TIMEOUT_S: the read timeout (the lab scales it with the NAT's idle timeout).
LAB_CONFIG_KEEPALIVE: "0" leaves ``tcp_keepalive`` out of the Config (the configuration that turns
it on with AWS's ``BOTOCORE_TCP_KEEPALIVE=true`` instead).
LAB_MAX_ATTEMPTS: when set, ``retries={"total_max_attempts": N}`` (a call that must not run twice).
"""

import json
import os
import threading
import time

import boto3
from botocore.config import Config
from readback import runs_on, sockets

READ_TIMEOUT_S = float(os.environ["LAB_READ_TIMEOUT_S"])
options = {"read_timeout": READ_TIMEOUT_S}
if os.environ.get("LAB_CONFIG_KEEPALIVE", "1") == "1":
    options["tcp_keepalive"] = True
if os.environ.get("LAB_MAX_ATTEMPTS"):
    options["retries"] = {"total_max_attempts": int(os.environ["LAB_MAX_ATTEMPTS"])}
client = boto3.client("lambda", config=Config(**options))


def timeouts():
    """The client's own timeouts, as the handler runs: the layer must leave them as the user set them."""
    return {"read_timeout": client.meta.config.read_timeout, "connect_timeout": client.meta.config.connect_timeout}


def handler(event, context):
    """Invoke the callee once (RequestResponse); the callee's answer, or the error, and the time."""
    started = time.monotonic()
    # Halfway through the read timeout the request is in flight and the callee still works: the
    # kernel's view of the socket then is what carries (or loses) the flow, stock's included.
    during = []
    reader = threading.Timer(READ_TIMEOUT_S / 2, lambda: during.extend(sockets()))
    reader.daemon = True
    reader.start()
    try:
        response = client.invoke(FunctionName=event.get("callee", "lab-callee"), Payload=json.dumps(event).encode())
        answer = json.loads(response["Payload"].read())
    except Exception as error:  # what the caller's code would see: reported, not raised
        reader.cancel()
        return {"answered": False, "error": type(error).__name__, "detail": str(error)[:300],
                "seconds": round(time.monotonic() - started, 3), "pid": os.getpid(), "timeouts": timeouts(),
                "sockets_during_call": during, **runs_on()}
    reader.cancel()
    return {"answered": True, "answer": answer, "seconds": round(time.monotonic() - started, 3),
            "pid": os.getpid(), "timeouts": timeouts(), "sockets": sockets(), "sockets_during_call": during,
            **runs_on()}
