"""What a long-call caller reports besides its answer, read in its own process: the sockets to the
endpoint as the kernel has them, and which SDK the call ran on with or without the layer loaded.

Shared by caller.py and caller_aio.py (run.py copies it next to caller_aio.py in the async task
folder). It makes no client and imports nothing of the SDK's itself: what it names is what the
caller imported.
"""

import gc
import os
import socket
import sys


def sockets():
    """Each open socket to the endpoint, read back from the kernel: its timeout and keep-alive options."""
    port = int(os.environ["AWS_ENDPOINT_URL_LAMBDA"].rsplit(":", 1)[1])
    found = []
    for obj in gc.get_objects():
        # TCP only: an event loop's self-pipe is an AF_UNIX pair, whose peer name is a string.
        if isinstance(obj, socket.socket) and obj.fileno() != -1 and obj.family in (socket.AF_INET, socket.AF_INET6):
            try:
                if obj.getpeername()[1] != port:
                    continue
                found.append({"timeout": obj.gettimeout(),
                              "SO_KEEPALIVE": obj.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
                              "TCP_KEEPIDLE": obj.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
                              "TCP_KEEPINTVL": obj.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL)})
            except OSError:
                continue
    return found


def runs_on():
    """The SDK the call ran on (botocore's version, aiobotocore's when imported) and whether the
    layer's package was imported at all: a stock caller must never have it."""
    found = {"botocore": sys.modules["botocore"].__version__, "layer_loaded": "aws_keepalive" in sys.modules}
    if "aiobotocore" in sys.modules:
        found["aiobotocore"] = sys.modules["aiobotocore"].__version__
    return found
