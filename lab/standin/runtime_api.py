"""A Lambda Runtime API (2018-06-01) server written for the lab.

awslambdaric talks to the Runtime API through a C extension (libcurl). On Lambda the other end is the
"RAPID" process; here it is this module, so that the function's own code (the handler, the layer's
hook, boto3) runs exactly as it would, while the lab decides *when* an invocation arrives.

Endpoints (the ones awslambdaric 4.2.2 uses outside SnapStart and multi-concurrency):

- ``GET  /2018-06-01/runtime/invocation/next`` blocks until an invocation is queued, then answers
  with the event as body and the headers Lambda sends (request id, deadline, function ARN, trace id);
- ``POST /2018-06-01/runtime/invocation/{id}/response`` the handler's result;
- ``POST /2018-06-01/runtime/invocation/{id}/error`` the handler raised (error JSON in the body, type in
  ``Lambda-Runtime-Function-Error-Type``);
- ``POST /2018-06-01/runtime/init/error`` the handler could not be imported.

SnapStart (AWS_LAMBDA_INITIALIZATION_TYPE=snap-start), as awslambdaric 4.2.2 uses it:

- ``GET  /2018-06-01/runtime/restore/next`` the runtime calls it after init and the before-snapshot
  hooks. On Lambda the snapshot is taken while it blocks, and the call returns in the restored
  environment, which then runs the after-restore hooks. Here it blocks until the lab calls
  ``release_restore()`` (having frozen the process and made the network forget its flows: the
  "snapshot" and the "restore"); ``restore_waiting`` says the runtime is blocked in it;
- ``POST /2018-06-01/runtime/restore/error`` an after-restore hook raised (kept in ``restore_error``).

Why the details below matter:

- ``disable_nagle_algorithm = True``: the runtime posts the response as header and body in separate
  writes; with Nagle on, our small replies meet delayed ACKs and every invocation stalls ~40 ms, which
  would swamp the milliseconds the lab measures.
- HTTP/1.1 with keep-alive: libcurl reuses its connection to the Runtime API as it does on Lambda, so
  the stand-in adds no connection setup per invocation.
- ``next`` is answered from a handler thread that waits on a condition variable. The count of ``next``
  calls is how the lab knows the runtime is idle again ("back blocking in next"), which is the moment
  Lambda may freeze the environment.

Multi-concurrent mode (Lambda Managed Instances: awslambdaric 4.x with AWS_LAMBDA_MAX_CONCURRENCY=N
starts N worker processes, each a runtime client with its own connection, each blocking in ``next``
and serving one invocation at a time; the endpoints are the same): every connection is served by its
own thread, so N long polls wait at once (``waiting`` counts them). An invocation queued while
pollers wait is handed to one of them chosen by ``dispatch``: ``"lifo"`` (the default) the poller
that started waiting last, ``"fifo"`` the one waiting longest. How Lambda picks a worker is not
published; LIFO is what lets the lab keep some workers busy while others sit idle for minutes
(a burst of B < N invocations always goes to the B workers that came back last), FIFO rotates
through all of them. An invocation queued while no poller waits goes to the next ``next`` call.
"""

import http.server
import json
import secrets
import socket
import sys
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Optional

from lab.net.server_thread import ServerThread

PREFIX = "/2018-06-01/runtime"
DEFAULT_FUNCTION_ARN = "arn:aws:lambda:us-east-1:123456789012:function:lab-function"


@dataclass
class Timings:
    """Monotonic timestamps (ns) of one invocation, as seen by the Runtime API server."""

    queued_ns: int
    delivered_ns: Optional[int] = None  # the runtime's ``next`` returned it
    completed_ns: Optional[int] = None  # response or error posted

    @property
    def duration_ms(self) -> Optional[float]:
        """Client-observed duration: queued until the response arrived."""
        if self.completed_ns is None:
            return None
        return (self.completed_ns - self.queued_ns) / 1e6

    @property
    def wait_ms(self) -> Optional[float]:
        """Queued until the runtime took it (includes thawing a frozen runtime)."""
        if self.delivered_ns is None:
            return None
        return (self.delivered_ns - self.queued_ns) / 1e6


@dataclass
class Outcome:
    """What the runtime answered: kind is "response", "error", "init_error" or "timeout"."""

    kind: str
    body: Any = None  # parsed JSON when it parses, else the raw bytes
    error_type: Optional[str] = None  # Lambda-Runtime-Function-Error-Type header, else body's errorType
    headers: dict = field(default_factory=dict)  # the request headers of the POST

    @property
    def ok(self) -> bool:
        return self.kind == "response"


@dataclass
class _Invocation:
    request_id: str
    event: bytes
    deadline_ms: int
    timings: Timings
    outcome: Optional[Outcome] = None
    headers: dict = field(default_factory=dict)


def _parse(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return body


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: "_Server"

    def log_message(self, format, *args):  # noqa: A002 - signature of the base class
        pass  # the lab prints what it measures, not an access log

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()  # the empty line after the last chunk
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _reply(self, status: int, payload: bytes = b"", headers: Optional[dict] = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        try:
            self.end_headers()
            self.wfile.write(payload)
        except OSError:  # the runtime went away (stopped or killed while blocked in next)
            self.close_connection = True

    def do_GET(self):
        if self.path == PREFIX + "/restore/next":
            if not self.server.api._wait_restore():
                self.close_connection = True
                return self._reply(500, b'{"errorType":"ServerClosing"}')
            return self._reply(200, b"")
        if self.path != PREFIX + "/invocation/next":
            return self._reply(404, b'{"errorType":"NotFound"}')
        invocation = self.server.api._next_invocation()
        if invocation is None:  # server closing: leave the runtime blocked no longer
            self.close_connection = True
            return self._reply(500, b'{"errorType":"ServerClosing"}')
        self._reply(200, invocation.event, invocation.headers)

    def do_POST(self):
        body = self._read_body()
        api = self.server.api
        headers = dict(self.headers.items())
        parsed = _parse(body)
        # awslambdaric's C client does not send the error-type header with invocation errors (it
        # sends the X-Ray cause instead); the type is in the body then, as on Lambda.
        error_type = self.headers.get("Lambda-Runtime-Function-Error-Type") or (
            parsed.get("errorType") if isinstance(parsed, dict) else None)
        if self.path == PREFIX + "/restore/error":
            api.restore_error = Outcome("restore_error", parsed, error_type, headers)
            return self._reply(202, b'{"status":"OK"}')
        if self.path == PREFIX + "/init/error":
            api._finish(None, Outcome("init_error", parsed, error_type, headers))
            return self._reply(202, b'{"status":"OK"}')
        parts = self.path[len(PREFIX):].split("/")  # ["", "invocation", id, "response"|"error"]
        if (
            self.path.startswith(PREFIX + "/invocation/")
            and len(parts) == 4
            and parts[3] in ("response", "error")
        ):
            kind = "response" if parts[3] == "response" else "error"
            if api._finish(parts[2], Outcome(kind, parsed, error_type if kind == "error" else None, headers)):
                return self._reply(202, b'{"status":"OK"}')
            return self._reply(400, b'{"errorType":"InvalidRequestID"}')
        return self._reply(404, b'{"errorType":"NotFound"}')


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    api: "RuntimeApi"

    def handle_error(self, request, client_address):
        # A runtime that is stopped mid-request drops its connection; that is expected in the lab
        # and must not print tracebacks. Anything else is still reported.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class RuntimeApi:
    """The Runtime API server; ``with RuntimeApi(host) as api: ... api.invoke(event)``.

    host: the address to bind, 127.0.0.1 by default. port 0 picks a free port. ``address`` is what goes
    into the function's AWS_LAMBDA_RUNTIME_API.

    sock: an unbound TCP socket to bind and serve on instead of a new one. For a function inside a
    network namespace, pass a socket created *in that namespace* (``NatNamespace.socket()``) and keep
    host 127.0.0.1: the Runtime API is then on the namespace's own loopback, as it is local to the
    sandbox on Lambda. Serving it over the veth instead (host = the veth's host-side address) puts the
    runtime's long-blocked ``next`` connection through the NAT, whose idle timeout then forgets it
    and the next invocation is never delivered.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, function_arn: str = DEFAULT_FUNCTION_ARN,
                 sock=None, dispatch: str = "lifo"):
        if dispatch not in ("lifo", "fifo"):
            raise ValueError("dispatch must be 'lifo' or 'fifo', not %r" % dispatch)
        self.function_arn = function_arn
        self.dispatch = dispatch
        self._cond = threading.Condition()
        self._queue: deque = deque()  # invocations no poller has taken yet
        self._waiting: list = []  # one slot (a one-item list) per blocked ``next``, oldest first
        self._inflight: dict = {}
        self._polls = 0
        self._poll_times: list = []
        self._closing = False
        self.init_error: Optional[Outcome] = None
        self.restore_error: Optional[Outcome] = None
        self._restore_waiting = False
        self._restore_released = False
        if sock is None:
            self._server = _Server((host, port), _Handler)
        else:
            # A socket made elsewhere, typically inside the function's network namespace (a socket
            # belongs to the namespace it was created in, whichever thread uses it later).
            self._server = _Server((host, port), _Handler, bind_and_activate=False)
            self._server.socket.close()
            self._server.socket = sock
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._server.server_bind()
            self._server.server_activate()
        self._server.api = self
        self._serving = ServerThread(self._server, "runtime-api")

    # --- public API -----------------------------------------------------------------------------
    @property
    def address(self) -> str:
        host, port = self._server.server_address[:2]
        return "%s:%d" % (host, port)

    @property
    def polls(self) -> int:
        """How many times the runtime has called ``next`` so far."""
        with self._cond:
            return self._polls

    def poll_time_ns(self, n: int) -> Optional[int]:
        """Monotonic time of the n-th ``next`` call (1-based), or None if it has not happened."""
        with self._cond:
            return self._poll_times[n - 1] if len(self._poll_times) >= n else None

    @property
    def waiting(self) -> int:
        """How many ``next`` calls are blocked right now (multi-concurrent: idle workers)."""
        with self._cond:
            return len(self._waiting)

    def wait_waiting(self, n: int, timeout: float) -> bool:
        """Wait until at least n ``next`` calls are blocked at once, or an init error arrived."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self._waiting) < n and self.init_error is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return len(self._waiting) >= n

    def wait_polls(self, n: int, timeout: float) -> bool:
        """Wait until ``next`` has been called n times in total, or an init error arrived."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._polls < n and self.init_error is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return self._polls >= n

    @property
    def restore_waiting(self) -> bool:
        """The runtime is blocked in ``restore/next``: init is done, the snapshot may be taken."""
        with self._cond:
            return self._restore_waiting

    def release_restore(self) -> None:
        """Answer ``restore/next``: the environment is restored, the after-restore hooks run next."""
        with self._cond:
            self._restore_released = True
            self._cond.notify_all()

    def invoke(self, event: Any, timeout: float = 30.0, request_id: Optional[str] = None):
        """Queue one invocation and wait for its outcome; returns ``(Outcome, Timings)``.

        ``event`` is JSON-encoded unless it is bytes. The deadline header is now + timeout. The
        outcome's kind is "timeout" when nothing came back in time, "init_error" if the runtime
        reported one instead.
        """
        invocation = self.queue(event, timeout, request_id)
        return self.wait(invocation, timeout)

    def queue(self, event: Any, timeout: float = 30.0, request_id: Optional[str] = None) -> _Invocation:
        """Queue an invocation without waiting (see ``wait``)."""
        payload = event if isinstance(event, bytes) else json.dumps(event).encode()
        request_id = request_id or str(uuid.uuid4())
        deadline_ms = int((time.time() + timeout) * 1000)
        invocation = _Invocation(request_id, payload, deadline_ms, Timings(time.monotonic_ns()))
        invocation.headers = {
            "Content-Type": "application/json",
            "Lambda-Runtime-Aws-Request-Id": request_id,
            "Lambda-Runtime-Deadline-Ms": str(deadline_ms),
            "Lambda-Runtime-Invoked-Function-Arn": self.function_arn,
            "Lambda-Runtime-Trace-Id": "Root=1-%08x-%s;Parent=%s;Sampled=0"
            % (int(time.time()), secrets.token_hex(12), secrets.token_hex(8)),
        }
        with self._cond:
            self._inflight[request_id] = invocation
            if self._waiting:
                slot = self._waiting.pop() if self.dispatch == "lifo" else self._waiting.pop(0)
                slot.append(invocation)
            else:
                self._queue.append(invocation)
            self._cond.notify_all()
        return invocation

    def wait(self, invocation: _Invocation, timeout: float):
        """Wait for a queued invocation's outcome; returns ``(Outcome, Timings)``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while invocation.outcome is None and self.init_error is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            if invocation.outcome is not None:
                return invocation.outcome, invocation.timings
            self._inflight.pop(invocation.request_id, None)
            if invocation in self._queue:
                self._queue.remove(invocation)
            # Handed to a poller that has not returned it yet: it goes out, but nobody waits for it.
            if self.init_error is not None:
                return self.init_error, invocation.timings
            return Outcome("timeout"), invocation.timings

    def close(self) -> None:
        """Stop serving; blocked ``next`` calls get a 500 so their threads end."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._serving.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- called from handler threads ------------------------------------------------------------
    def _next_invocation(self) -> Optional[_Invocation]:
        with self._cond:
            self._polls += 1
            self._poll_times.append(time.monotonic_ns())
            self._cond.notify_all()
            if self._queue:
                invocation = self._queue.popleft()
            else:
                slot: list = []
                self._waiting.append(slot)
                self._cond.notify_all()
                while not slot and not self._closing:
                    self._cond.wait(0.5)
                if not slot:  # closing
                    self._waiting.remove(slot)
                    return None
                invocation = slot[0]
            invocation.timings.delivered_ns = time.monotonic_ns()
            return invocation

    def _wait_restore(self) -> bool:
        with self._cond:
            self._restore_waiting = True
            self._cond.notify_all()
            while not self._restore_released and not self._closing:
                self._cond.wait(0.5)
            self._restore_waiting = False
            return not self._closing

    def _finish(self, request_id: Optional[str], outcome: Outcome) -> bool:
        now = time.monotonic_ns()
        with self._cond:
            if request_id is None:
                self.init_error = outcome
                self._cond.notify_all()
                return True
            invocation = self._inflight.pop(request_id, None)
            if invocation is None or invocation.timings.delivered_ns is None:
                return False
            invocation.timings.completed_ns = now
            invocation.outcome = outcome
            self._cond.notify_all()
            return True


if __name__ == "__main__":  # manual use: serve on a port and print the address
    with RuntimeApi(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1") as _api:
        print(_api.address, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
