"""Lambda's durable execution service, stood in by AWS's own local runner, and Lambda's Invoke API.

Durable functions talk to two Lambda APIs: Lambda *invokes* the function (a handler invocation
whose event carries the execution's ARN, a checkpoint token and the operations so far), and the
function's SDK (aws-durable-execution-sdk-python) *checkpoints* each step to
``CheckpointDurableExecution`` (and pages ``GetDurableExecutionState``) through one boto3 Lambda
client, ``AWS_ENDPOINT_URL_LAMBDA`` where set. The lab runs both sides with real code:

* ``dex-local-runner start-server`` (aws-durable-execution-sdk-python-testing, PyPI) is the
  durable execution service: it keeps executions, serves the checkpoint API
  (``POST /2025-12-01/durable-executions/{arn}/checkpoint``, ``GET .../state``), starts
  executions (``POST /start-durable-execution``) and, when one needs to run (at the start, after a
  wait's timer, after a failed invocation), invokes the function with boto3's Lambda ``Invoke``
  at ``--lambda-endpoint`` (``sam local start-lambda``'s port by default). ``--no-skip-time``: a
  wait lasts its real seconds, so the function sits idle (frozen) through it.
* ``InvokeEndpoint`` is that Lambda endpoint: ``POST /2015-03-31/functions/{name}/invocations``
  handed to a callable per function name (the stand-in's ``LambdaFunction.invoke``, which thaws the
  environment, runs one invocation through the Runtime API and freezes it again), answered as
  Lambda answers (``X-Amz-Function-Error`` on a handler error).

Why a keep-alive front (``KeepAliveFront``) sits between the function and the runner: the runner's
web server is ``http.server`` at its default ``HTTP/1.0``, which closes the connection after every
response, so a client could never reuse one; Lambda's real endpoint is HTTPS with HTTP/1.1
keep-alive, and a pooled connection that outlives a wait is the whole question. The front speaks
HTTP/1.1 to the function, keeps its connections open with no idle timeout of its own (what ends
them is the lab's NAT), and forwards each request on a new connection to the runner. It also
records the ``User-Agent`` of every checkpoint request (the SDK's ``user_agent_extra`` must still
be there with the layer on). ``lab.net.tls_front.TLSFront`` goes in front of it, so the function talks
HTTPS and a new connection costs what it costs on Lambda (TCP + TLS handshake + trust store).

    function (NAT namespace) -> Netem (RTT) -> TLSFront -> KeepAliveFront -> dex-local-runner
    dex-local-runner -> InvokeEndpoint -> LambdaFunction.invoke (Runtime API, thaw/freeze)

``DurableService`` starts the runner (a subprocess of the given interpreter's venv, stopped by
pid), the fronts and the Invoke endpoint, and offers what ``lab.standin.function_net.FunctionNetwork``
needs from a service (``tls_address``, ``add_hostnames``, ``ca_bundle_path``), so each function
gets its own NAT namespace and Netem in front of the one service, as with DynamoDB Local.
"""

from __future__ import annotations

import http.client
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Callable, Optional

from lab.net import process
from lab.net.server_thread import ServerThread
from lab.services.dynamodb import free_port

CHECKPOINT_PATH = "/2025-12-01/durable-executions/"
INVOKE_PREFIX = "/2015-03-31/functions/"
ACCOUNT_ID = "123456789012"
# Dummy credentials for the runner's own boto3 client (it signs its Invoke calls; nothing checks).
RUNNER_ENV = {
    "AWS_ACCESS_KEY_ID": "AKIDLABLABLABLABLAB0",
    "AWS_SECRET_ACCESS_KEY": "lab-secret-access-key",
    "AWS_DEFAULT_REGION": "us-east-1",
}
START_TIMEOUT = 30.0


class _QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        # A client that goes away mid-request (a function stopped, a NAT that reset the flow) is
        # expected in the lab; anything else is still reported.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: a client may reuse its connection
    disable_nagle_algorithm = True  # small replies must not wait for delayed ACKs (~40 ms)

    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass

    def _body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _reply(self, status: int, body: bytes, headers: dict) -> None:
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


# --- HTTP/1.1 keep-alive in front of the runner's HTTP/1.0 server ---------------------------------
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "proxy-connection"}


class _FrontHandler(_Handler):
    server: "_FrontServer"

    def _forward(self) -> None:
        body = self._body()
        front = self.server.front
        if self.path.startswith(CHECKPOINT_PATH):
            front._note(self.command, self.path, self.headers.get("User-Agent", ""))
        upstream = http.client.HTTPConnection(*front.upstream, timeout=front.upstream_timeout)
        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
            upstream.request(self.command, self.path, body=body, headers=headers)
            response = upstream.getresponse()
            payload = response.read()  # HTTP/1.0 without a length: read to the close
            out = {k: v for k, v in response.getheaders() if k.lower() not in _HOP_BY_HOP}
            self._reply(response.status, payload, out)
        finally:
            upstream.close()

    do_GET = do_POST = do_PUT = do_DELETE = _forward


class _FrontServer(_QuietServer):
    front: "KeepAliveFront"


class KeepAliveFront:
    """An HTTP/1.1 keep-alive server relaying each request to ``upstream`` (host, port) on a new
    connection. ``requests``: (time, method, path, User-Agent) of each checkpoint-API request."""

    def __init__(self, upstream: tuple, upstream_timeout: float = 120.0) -> None:
        self.upstream = upstream
        self.upstream_timeout = upstream_timeout
        self.requests: list = []
        self._lock = threading.Lock()
        self._server = _FrontServer(("127.0.0.1", 0), _FrontHandler)
        self._server.front = self
        self._serving = ServerThread(self._server, "keepalive-front")

    @property
    def address(self) -> tuple:
        return self._server.server_address[:2]

    def _note(self, method: str, path: str, user_agent: str) -> None:
        with self._lock:
            self.requests.append((time.time(), method, path, user_agent))

    def user_agents(self) -> set:
        with self._lock:
            return {ua for _, _, _, ua in self.requests}

    def close(self) -> None:
        self._serving.close()


# --- Lambda's Invoke API ------------------------------------------------------------------------
class _InvokeHandler(_Handler):
    server: "_InvokeServer"

    def do_POST(self):
        body = self._body()
        parts = self.path.split("?")[0][len(INVOKE_PREFIX):].split("/")
        if not self.path.startswith(INVOKE_PREFIX) or len(parts) != 2 or parts[1] != "invocations":
            return self._error(404, "UnknownOperationException", "no route %s" % self.path)
        target = self.server.functions.get(parts[0])
        if target is None:
            return self._error(404, "ResourceNotFoundException", "Function not found: %s" % parts[0])
        request_id = str(uuid.uuid4())
        try:
            payload, function_error = target(body)
        except Exception as error:  # the stand-in itself failed: a service error, not the handler's
            return self._error(500, "ServiceException", "%s: %s" % (type(error).__name__, error))
        headers = {"Content-Type": "application/json", "X-Amz-Executed-Version": "$LATEST",
                   "x-amzn-RequestId": request_id}
        if function_error:
            headers["X-Amz-Function-Error"] = function_error
        self._reply(200, payload, headers)

    def _error(self, status: int, kind: str, message: str) -> None:
        self._reply(status, json.dumps({"Type": "User", "message": message}).encode(),
                    {"Content-Type": "application/json", "x-amzn-ErrorType": kind})


class _InvokeServer(_QuietServer):
    functions: dict


class InvokeEndpoint:
    """Lambda's ``Invoke`` (RequestResponse) on 127.0.0.1: ``register(name, fn)`` where ``fn(payload
    bytes) -> (response bytes, function_error or None)``."""

    def __init__(self) -> None:
        self._server = _InvokeServer(("127.0.0.1", 0), _InvokeHandler)
        self._server.functions = {}
        self._serving = ServerThread(self._server, "invoke-endpoint")

    @property
    def address(self) -> tuple:
        return self._server.server_address[:2]

    @property
    def url(self) -> str:
        return "http://%s:%d" % self.address

    def register(self, name: str, fn: Callable[[bytes], tuple]) -> None:
        self._server.functions[name] = fn

    def unregister(self, name: str) -> None:
        self._server.functions.pop(name, None)

    def close(self) -> None:
        self._serving.close()


def invoke_function(fn, payload: bytes, timeout: float) -> tuple:
    """Run one invocation of a lab ``LambdaFunction`` for the Invoke endpoint; the lab's record
    goes to ``fn.records`` (a list the caller attached) for the experiment to read."""
    record = fn.invoke(json.loads(payload or b"{}"), timeout)
    fn.records.append(record)
    if record.outcome.kind == "response":
        body = record.result
        return (body if isinstance(body, bytes) else json.dumps(body).encode()), None
    body = record.result if record.result is not None else {"errorMessage": record.outcome.kind}
    return (body if isinstance(body, bytes) else json.dumps(body).encode()), "Unhandled"


# --- the service ----------------------------------------------------------------------------------
class DurableService:
    """``with DurableService(python=...) as svc:`` the runner, its keep-alive and TLS fronts and the
    Invoke endpoint. ``python``: an interpreter whose environment has the testing package (its
    ``dex-local-runner``). ``invocation_timeout``: the runner's emulated function timeout (s).
    ``lambda_endpoint``: invoke functions there instead (e.g. AWS's Runtime Interface Emulator,
    which serves Invoke for the one function it runs); then ``invoke`` is None."""

    def __init__(self, *, python: Optional[str] = None, invocation_timeout: int = 300,
                 hostnames=("localhost", "127.0.0.1"), lambda_endpoint: Optional[str] = None) -> None:
        self.python = python or sys.executable
        self.invocation_timeout = invocation_timeout
        self.lambda_endpoint = lambda_endpoint
        self.hostnames = list(hostnames)
        self.port: Optional[int] = None
        self.proc: Optional[subprocess.Popen] = None
        self.invoke: Optional[InvokeEndpoint] = None
        self.front: Optional[KeepAliveFront] = None
        self.tls = None
        self._log: Optional[Path] = None

    # FunctionNetwork's view of a service (the same three names lab.dynamodb.DynamoDBLocal has).
    @property
    def tls_address(self) -> tuple:
        return ("127.0.0.1", self.tls.port)

    @property
    def ca_bundle_path(self) -> str:
        return self.tls.ca_bundle_path

    def add_hostnames(self, *names: str) -> None:
        self.tls.add_hostnames(*names)

    @property
    def url(self) -> str:
        return "http://127.0.0.1:%d" % self.port

    def runner_command(self) -> list:
        runner = Path(self.python).parent / "dex-local-runner"
        return [str(runner), "start-server", "--host", "127.0.0.1", "--port", str(self.port),
                "--lambda-endpoint", self.lambda_endpoint or self.invoke.url, "--local-runner-endpoint", self.url,
                "--no-skip-time", "--log-level", "WARNING",
                "--invocation-timeout", str(self.invocation_timeout)]

    def start(self) -> "DurableService":
        from lab.net.tls_front import TLSFront

        try:
            if self.lambda_endpoint is None:
                self.invoke = InvokeEndpoint()
            self.port = free_port()
            self._log = Path(tempfile.mkdtemp(prefix="dex-local-runner-")) / "runner.log"
            env = dict(os.environ, **RUNNER_ENV)
            env.pop("AWS_ENDPOINT_URL", None)
            env.pop("AWS_ENDPOINT_URL_LAMBDA", None)
            with open(self._log, "wb") as log:
                self.proc = subprocess.Popen(self.runner_command(), env=env, stdin=subprocess.DEVNULL,
                                             stdout=log, stderr=subprocess.STDOUT)
            self._wait_ready()
            self.front = KeepAliveFront(("127.0.0.1", self.port), upstream_timeout=self.invocation_timeout)
            self.tls = TLSFront(self.front.address, hostnames=self.hostnames).start()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("dex-local-runner exited %s:\n%s" % (self.proc.returncode, self.log_text()))
            try:
                self._request("GET", "/2025-12-01/durable-executions", None, timeout=1.0)
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("dex-local-runner did not answer within %.0f s:\n%s" % (START_TIMEOUT, self.log_text()))

    def log_text(self) -> str:
        """The end of the runner's output (its warnings and errors)."""
        return self._log.read_text(errors="replace")[-4000:] if self._log and self._log.exists() else ""

    def stop(self) -> None:
        if self.tls is not None:
            self.tls.stop()
            self.tls = None
        if self.front is not None:
            self.front.close()
            self.front = None
        if self.proc is not None:
            process.stop(self.proc)
            self.proc = None
        if self.invoke is not None:
            self.invoke.close()
            self.invoke = None
        if self._log is not None:
            shutil.rmtree(self._log.parent, ignore_errors=True)
            self._log = None

    def __enter__(self) -> "DurableService":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- the runner's API (plain HTTP on loopback, as the lab's driver; not through the NAT) ------
    def _request(self, method: str, path: str, body: Optional[dict], timeout: float = 10.0) -> dict:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            data = json.dumps(body).encode() if body is not None else None
            connection.request(method, path, body=data, headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            payload = response.read()
        finally:
            connection.close()
        parsed = json.loads(payload) if payload.strip() else {}
        if response.status >= 300:
            raise RuntimeError("%s %s: %d %s" % (method, path, response.status, parsed))
        return parsed

    def start_execution(self, function_name: str, event: dict, *, timeout_s: int = 900,
                        name: Optional[str] = None) -> str:
        """Start a durable execution of ``function_name`` with ``event``; returns its ARN. The runner
        invokes the function (through the Invoke endpoint) right away, in its own thread."""
        answer = self._request("POST", "/start-durable-execution", {
            "AccountId": ACCOUNT_ID, "FunctionName": function_name, "FunctionQualifier": "$LATEST",
            "ExecutionName": name or "%s-%s" % (function_name, uuid.uuid4().hex[:8]),
            "ExecutionTimeoutSeconds": timeout_s, "ExecutionRetentionPeriodDays": 1,
            "InvocationId": str(uuid.uuid4()), "Input": json.dumps(event)})
        return answer["ExecutionArn"] if "ExecutionArn" in answer else answer["DurableExecutionArn"]

    def execution(self, arn: str) -> dict:
        """GetDurableExecution: Status (RUNNING, SUCCEEDED, FAILED, ...), Result, Error."""
        from urllib.parse import quote

        return self._request("GET", CHECKPOINT_PATH + quote(arn, safe=""), None)

    def wait_done(self, arn: str, timeout: float, poll_s: float = 0.5) -> dict:
        """Poll the execution until it leaves RUNNING (or ``timeout``); returns the last answer."""
        deadline = time.monotonic() + timeout
        while True:
            state = self.execution(arn)
            if state.get("Status") != "RUNNING" or time.monotonic() > deadline:
                return state
            time.sleep(poll_s)
