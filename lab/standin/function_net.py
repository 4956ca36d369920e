"""One function's network in the lab: a NAT namespace, a Netem hop, and the way into DynamoDB Local.

    with DynamoDBLocal() as ddb, FunctionNetwork(ddb, nat_timeout=3, mode="reset", rtt=0.004) as net:
        with net.function("examples/put_item", "app.handler", opt=layer, env=...) as fn:
            records = run_gaps(fn, net, {}, [4.5, 4.5])

The chain a request takes (each piece is someone else's module; this one only wires them)::

    function process            root namespace
    (NAT namespace)  --veth-->  Netem (RTT)  -->  TLS front  -->  DynamoDB Local
    conntrack + nftables        on the veth's host address

Why one namespace *and* one Netem per function: conntrack's flow table and Netem's connection
counters are then that function's alone, so several configurations (no layer / switch off / on)
can run side by side without seeing each other's connections.

Why Netem sits on the host side of the veth: the function's TLS handshake then crosses the emulated
RTT like a real new connection would, and the kernel that answers the function's keep-alive probes
is the root namespace's (Netem's accepted socket), outside the NAT, as with a real endpoint.

The Runtime API is served on a socket made inside the namespace (``api_sock_factory=nat.socket``):
otherwise the runtime's own long-poll ``next`` connection would cross the NAT and be forgotten
during a gap, which is an artefact of the lab, not something Lambda does.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Optional, Sequence

from lab.standin.driver import sleep_until
from lab.standin.trust_store import sdk_bundle_with
from lab.standin.lambda_env import BASE_ENV, Invocation, LambdaFunction
from lab.net.nat import NatNamespace
from lab.net.netem import Netem

# TLSFront.add_hostnames re-issues the certificate; networks created from several threads must not
# interleave that.
_hostnames_lock = threading.Lock()

# The layer's shipped defaults and the AWS middlebox timeout they are designed against (README).
NAT_TIMEOUT_S = 350
DEFAULTS = {"idle": 60, "interval": 10, "count": 3, "max_idle": 300}

# AWS's own switch, the anchor the demo and the soak run beside the layer: botocore 1.42.29+ reads
# BOTOCORE_TCP_KEEPALIVE=true (botocore PR #3579) and sets SO_KEEPALIVE alone, so the kernel's
# timers apply (first probe after 7200 s, sysctl net.ipv4.tcp_keepalive_time), and it replaces no
# pooled connection. Nothing of ours runs in that configuration.
AWS_SWITCH_ENV = {"BOTOCORE_TCP_KEEPALIVE": "true"}
AWS_SWITCH_SINCE = "1.42.29"


def aws_switch_missing(botocore_version: str) -> Optional[str]:
    """None when that botocore reads BOTOCORE_TCP_KEEPALIVE; else the sentence a report shows in the
    configuration's place (the variable would be silently ignored: numbers would be "no layer" again)."""
    def key(version):
        return tuple(int(part) for part in version.split(".")[:3])

    if key(botocore_version) >= key(AWS_SWITCH_SINCE):
        return None
    return "not run: the runtime-kind botocore %s predates BOTOCORE_TCP_KEEPALIVE (%s+)" % (
        botocore_version, AWS_SWITCH_SINCE)


def scaled_timers(nat_timeout_s: int) -> dict:
    """The layer's defaults scaled by ``nat_timeout_s / 350``, as whole seconds >= 1 (the kernel's
    unit); the count is not a time and stays. MAX_IDLE keeps its margin below the NAT timeout:
    scaled and rounded down, and at least one second below it."""
    scale = nat_timeout_s / NAT_TIMEOUT_S
    return {
        "idle": max(1, round(DEFAULTS["idle"] * scale)),
        "interval": max(1, round(DEFAULTS["interval"] * scale)),
        "count": DEFAULTS["count"],
        "max_idle": max(1, min(int(DEFAULTS["max_idle"] * scale), nat_timeout_s - 1)),
    }


def lab_client(ddb):
    """A boto3 DynamoDB client in this process that sees what the lab's functions see.

    DynamoDB Local (without -sharedDb) keeps one database per access key and region, so it uses the
    credentials and region the stand-in gives every function (BASE_ENV): a table created with any
    other key would not exist for the functions (ResourceNotFoundException)."""
    import boto3

    return boto3.client("dynamodb", **dict(ddb.client_kwargs(), region_name=BASE_ENV["AWS_REGION"],
                                            aws_access_key_id=BASE_ENV["AWS_ACCESS_KEY_ID"],
                                            aws_secret_access_key=BASE_ENV["AWS_SECRET_ACCESS_KEY"]))


def create_table(ddb, name: str) -> None:
    """Create the example handler's table (partition key ``pk``, a string) where functions see it."""
    lab_client(ddb).create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])


def keepalive_env(*, on: bool = True, idle: Optional[int] = None, interval: Optional[int] = None,
                  count: Optional[int] = None, max_idle: Optional[int] = None, debug: bool = True) -> dict:
    """The layer's variables for a function: switch on (or absent = off) plus the given timers."""
    if not on:
        return {}
    env = {"AWS_PYTHON_KEEPALIVE": "1"}
    for name, value in (("IDLE", idle), ("INTERVAL", interval), ("COUNT", count), ("MAX_IDLE", max_idle)):
        if value is not None:
            env["AWS_PYTHON_KEEPALIVE_" + name] = str(value)
    if debug:
        env["AWS_PYTHON_KEEPALIVE_DEBUG"] = "1"
    return env


class FunctionNetwork:
    """A NAT namespace (idle timeout ``nat_timeout`` s, ``mode`` reset/drop) and a Netem with ``rtt``
    seconds in front of ``ddb``'s TLS front, listening on the namespace's veth host address."""

    def __init__(self, ddb, *, nat_timeout: int, mode: str = "reset", rtt: float = 0.0) -> None:
        self.ddb = ddb
        self.nat = NatNamespace(timeout=nat_timeout, mode=mode)
        self.rtt = rtt
        self.netem: Optional[Netem] = None

    def start(self) -> "FunctionNetwork":
        self.nat.create()
        try:
            self.netem = Netem(self.ddb.tls_address, rtt=self.rtt, listen_host=self.nat.host_address).start()
            with _hostnames_lock:
                self.ddb.add_hostnames(self.nat.host_address)
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self.netem is not None:
            self.netem.stop()
            self.netem = None
        self.nat.delete()

    def __enter__(self) -> "FunctionNetwork":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def endpoint_url(self) -> str:
        """What the function's client connects to: Netem, seen from inside the namespace."""
        return "https://%s:%d" % (self.nat.host_address, self.netem.port)

    def function_env(self, table: str) -> dict:
        """Variables the example handler needs: table, endpoint (no code change), CAs to trust:
        a real-size trust store, the SDK's default bundle with the lab CA added (lab/standin/trust_store.py)."""
        return {"TABLE_NAME": table, "AWS_ENDPOINT_URL_DYNAMODB": self.endpoint_url,
                "AWS_CA_BUNDLE": sdk_bundle_with(self.ddb.ca_bundle_path)}

    def function(self, task_root, handler: str, *, table: str, env: Optional[dict] = None,
                 **kwargs) -> LambdaFunction:
        """A LambdaFunction running inside the namespace (not started; use ``with``); ``kwargs`` go to
        LambdaFunction (e.g. ``memory_mb``: the CPU share and AWS_LAMBDA_FUNCTION_MEMORY_SIZE)."""
        return LambdaFunction(task_root, handler, env={**self.function_env(table), **(env or {})},
                              prefix=self.nat.command([]), api_sock_factory=self.nat.socket, **kwargs)


class CountingFunction:
    """Wraps a LambdaFunction so each record carries the TCP connections Netem accepted during it
    (``counters["tcp_connects"]``): the ground truth for "new connections", including a pooled
    connection reconnected in place, which urllib3's own log does not report."""

    def __init__(self, fn, network: FunctionNetwork) -> None:
        self.fn = fn
        self.netem = network.netem

    def invoke(self, event, timeout=90.0):
        before = self.netem.accepted
        record = self.fn.invoke(event, timeout)
        record.counters["tcp_connects"] = self.netem.accepted - before
        return record


def run_gaps(fn: LambdaFunction, network: FunctionNetwork, event: Any, gaps_s: Sequence[float], *,
             no_packets: bool = False, warm_up: bool = True, timeout: float = 90.0) -> list[Invocation]:
    """One warm-up invocation (``warm_up=False``: none, the first gap counts from now, e.g. the end
    of a previous phase), then one invocation after each idle gap (seconds from the end of the
    previous invocation to the start of the next). The function is frozen (SIGSTOP) through each
    gap, as Lambda freezes an idle environment; the kernel keeps running its TCP timers, so
    keep-alive probes still go out. ``no_packets=True`` models the other possibility, a frozen
    environment from which nothing leaves: the namespace's veth drops every packet (before
    conntrack sees it) for the length of the gap. ``gap_s`` of each record is the real idle time."""
    records = [fn.invoke(event, timeout)] if warm_up else []
    last_end = time.monotonic()
    for gap in gaps_s:
        with network.nat.frozen_while(no_packets):
            sleep_until(last_end + gap)
        started = time.monotonic()
        record = fn.invoke(event, timeout)
        record.gap_s = started - last_end
        records.append(record)
        last_end = time.monotonic()
    return records
