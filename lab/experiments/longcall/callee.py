"""The long call's far side: a Lambda Invoke endpoint whose callee answers after ``answer_s`` seconds,
and one caller's network in front of it.

    caller (stand-in function, NAT namespace) --veth--> TLSFront --> InvokeEndpoint --> SlowCallee
                                                        (root namespace, the veth's host address)

``SlowCallee`` is the callee: every request it receives is one execution (a retried Invoke is two),
so it counts them and notes when each arrived; it answers each after ``answer_s`` seconds, unless
stopped first. The endpoint (lab.services.durable.InvokeEndpoint) answers as Lambda's Invoke does.

``CallNetwork`` is one caller's own network: a NAT namespace (lab.net.nat) whose idle timeout and
mode (reset, drop) are the cell's, and a TLS front on the veth's host address (HTTPS, as Lambda's
endpoint; the caller trusts it through AWS_CA_BUNDLE: the SDK's bundle + the lab CA). Nothing of the
call is sent while the callee works: the flow is idle from the request's last ACK to the answer,
which the NAT drops (``iifname VETH ct state invalid drop``) once it has forgotten the flow -- in
both modes: a NAT has no mapping for a packet from outside. The reset mode differs only in what the
caller's own next packet meets.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Optional

from lab.net.nat import NatNamespace
from lab.net.tls_front import TLSFront
from lab.standin.lambda_env import LambdaFunction
from lab.standin.trust_store import sdk_bundle_with


class SlowCallee:
    """``fn(payload) -> (answer bytes, None)`` for InvokeEndpoint.register, after ``answer_s`` seconds."""

    def __init__(self, answer_s: float) -> None:
        self.answer_s = answer_s
        self.arrivals: list = []  # time.monotonic() of each request received
        self.answered = 0
        self._lock = threading.Lock()
        self._stopped = threading.Event()

    def __call__(self, payload: bytes) -> tuple:
        with self._lock:
            self.arrivals.append(time.monotonic())
            execution = len(self.arrivals)
        if self._stopped.wait(self.answer_s):
            raise RuntimeError("callee stopped before answering")
        with self._lock:
            self.answered += 1
        return json.dumps({"execution": execution, "slept_s": self.answer_s}).encode(), None

    @property
    def requests(self) -> int:
        with self._lock:
            return len(self.arrivals)

    def stop(self) -> None:
        """Release every execution still sleeping (it answers nothing)."""
        self._stopped.set()


class CallNetwork:
    """A NAT namespace (``nat_timeout`` s, ``mode``) and a TLS front to ``endpoint`` on its host address."""

    def __init__(self, endpoint, *, nat_timeout: int, mode: str) -> None:
        self.endpoint = endpoint
        self.nat = NatNamespace(timeout=nat_timeout, mode=mode)
        self.front: Optional[TLSFront] = None

    def start(self) -> "CallNetwork":
        self.nat.create()
        try:
            self.front = TLSFront(self.endpoint.address, listen_host=self.nat.host_address,
                                  hostnames=(self.nat.host_address,)).start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self.front is not None:
            self.front.stop()
            self.front = None
        self.nat.delete()

    def function_env(self) -> dict:
        return {"AWS_ENDPOINT_URL_LAMBDA": "https://%s:%d" % (self.nat.host_address, self.front.port),
                "AWS_CA_BUNDLE": sdk_bundle_with(self.front.ca_bundle_path)}

    def function(self, task_root, handler: str, *, env: dict, **kwargs) -> LambdaFunction:
        """The caller, a stand-in function inside the namespace (not started; use ``with``)."""
        return LambdaFunction(task_root, handler, env={**self.function_env(), **env},
                              prefix=self.nat.command([]), api_sock_factory=self.nat.socket, **kwargs)
