"""The durable function of the experiment: a workflow of steps and waits, with the SDK's own client
or one the user passes (``boto3_client=``), and nothing else on the network.

A first step, then rounds of a wait and two steps (each step checkpointed: START, then SUCCEED).
A wait ends the invocation (the SDK returns PENDING); when its timer fires the service invokes the
function again, which replays the finished operations from the event without calling anything, then
runs the round's steps: their first checkpoint is the first request on the pooled connection after
the wait, the later ones are steady checkpoints on a live connection. The last invocation returns
what the client was built with and the options of its sockets, read back from the kernel, for the
experiment's settings check.
"""

import gc
import os
import socket
from urllib.parse import urlsplit

import boto3
from aws_durable_execution_sdk_python import DurableContext, StepContext, durable_execution
from aws_durable_execution_sdk_python.config import Duration
from aws_durable_execution_sdk_python.lambda_service import LambdaClient
from botocore.config import Config


def work(step_context: StepContext) -> int:
    """A step's body: no I/O, so every request the function sends is the SDK's."""
    return sum(range(1000))


def workflow(event, context: DurableContext):
    context.step(work, name="first")
    for i in range(event["rounds"]):
        context.wait(Duration.from_seconds(event["wait_s"]), name="wait%d" % i)
        context.step(work, name="a%d" % i)
        context.step(work, name="b%d" % i)
    return {}


def client_settings(client) -> dict:
    """What the checkpoint client runs with: its config and its pooled sockets' options."""
    config = client.meta.config
    port = urlsplit(client.meta.endpoint_url).port
    sockets = []
    for obj in gc.get_objects():
        if isinstance(obj, socket.socket) and obj.fileno() != -1:
            try:
                if obj.getpeername()[1] != port:
                    continue
            except OSError:
                continue
            sockets.append({name: obj.getsockopt(level, getattr(socket, name)) for level, name in (
                (socket.SOL_SOCKET, "SO_KEEPALIVE"), (socket.IPPROTO_TCP, "TCP_KEEPIDLE"),
                (socket.IPPROTO_TCP, "TCP_KEEPINTVL"), (socket.IPPROTO_TCP, "TCP_KEEPCNT"))})
    return {"connect_timeout": config.connect_timeout, "read_timeout": config.read_timeout,
            "user_agent_extra": config.user_agent_extra, "tcp_keepalive": config.tcp_keepalive,
            "retries": config.retries, "endpoint_url": client.meta.endpoint_url,
            "max_pool_connections": config.max_pool_connections, "sockets": sockets}


def _reporting(client_of):
    def run(event, context):
        workflow(event, context)
        return client_settings(client_of())
    return run


# The SDK's own client: LambdaClient.initialize_client() creates it at the first invocation and
# caches it on the class (connect_timeout=5, read_timeout=50, user_agent_extra=the SDK's).
handler = durable_execution(_reporting(lambda: LambdaClient._cached_boto_client))

# A client the user builds and passes (the SDK then uses it as is): its settings must win.
USER_CLIENT = boto3.client("lambda", config=Config(connect_timeout=3, read_timeout=20,
                                                   user_agent_extra="lab-user-client/1"))
handler_user_client = durable_execution(_reporting(lambda: USER_CLIENT), boto3_client=USER_CLIENT)

if os.environ.get("LAB_DURABLE_DEBUG"):
    import logging

    logging.basicConfig(level=logging.DEBUG)
