"""A local HTTP/1.1 server that answers like DynamoDB, for tests on real sockets.

It keeps connections alive the way the real endpoint does, counts the TCP connections it accepted
and the requests it answered, and can be told to answer slowly (to make a client open a second
connection) or to close each connection after answering without saying so (so that the client
finds a pooled connection closed by its peer), at once or once it sat idle for a while (as an
endpoint or NAT does while a Lambda environment is frozen).

``stale_after_s`` plays a middlebox that forgot a flow idle longer than that, which the client
cannot see until it sends: a request arriving on a connection idle that long gets, instead of an
answer, a reset (``stale_mode="reset"``, SO_LINGER 0: what a NAT gateway sends) or silence until
``hang_s`` and then a close (``stale_mode="hang"``).  The server has read the request, so its
kernel acknowledged it: to the client "hang" is a server that never answers, not a silent
middlebox (which drops the request unacknowledged: lab/nat.py's ``mode="drop"`` on real kernels).

``throttle``: every request answered as DynamoDB answers a throttled one (the SDK's retries count).

``slow_once_s``: the first request that arrives on a reused connection is read, then answered
only after that many seconds (a slow server, once; the client's read timeout fires first).
"""

import http.server
import json
import socket
import socketserver
import struct
import threading
import time
import zlib


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def setup(self):
        super().setup()
        with self.server.lock:
            self.server.connections += 1
        self.answered_at = None
        if self.server.close_idle_after_s:
            # http.server closes the connection when reading the next request times out.
            self.connection.settimeout(self.server.close_idle_after_s)

    def do_POST(self):
        if self.server.tls_context is not None and not getattr(self, "_handshake_noted", False):
            # The server's own view of each TLS connection: did it resume a session?
            self._handshake_noted = True
            with self.server.lock:
                self.server.tls_resumed.append(self.connection.session_reused)
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        target = self.headers.get("X-Amz-Target", "")
        stale_after_s = self.server.stale_after_s
        reset_once = False
        if self.server.reset_once and self.answered_at is not None:
            with self.server.lock:
                reset_once, self.server.reset_once = self.server.reset_once, False
        if reset_once or (stale_after_s and self.answered_at is not None):
            if reset_once or time.monotonic() - self.answered_at > stale_after_s:
                with self.server.lock:
                    self.server.stale_hits += 1
                if self.server.stale_mode == "hang":
                    time.sleep(self.server.hang_s)
                else:
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                               struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True
                return
        with self.server.lock:
            self.server.requests += 1
            self.server.targets.append(target)
            slow_s = self.server.slow_once_s if self.answered_at is not None else None
            if slow_s:
                self.server.slow_once_s = None
        if slow_s:
            time.sleep(slow_s)
        if self.server.delay_s:
            time.sleep(self.server.delay_s)
        if self.server.close_after_response:
            # Hold the response in the kernel (TCP_CORK) so that the shutdown below tacks the FIN
            # onto its last segment: the client then receives the answer and the close together.
            # Closing after an uncorked write races the client, which may send its next request on
            # the connection before the FIN leaves this thread (seen under load in CI): that
            # request meets a reset, which is a real retry, not the "peer closed" case under test.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
        body, status = b"{}", 200
        if target.endswith(".GetItem"):
            body = json.dumps({"Item": {"pk": {"S": "1"}}}).encode()
        if self.server.throttle:
            body, status = json.dumps({"__type": "com.amazonaws.dynamodb.v20120810#"
                                       "ProvisionedThroughputExceededException", "message": "throttled"}).encode(), 400
        self.send_response(status)
        self.send_header("Content-Type", "application/x-amz-json-1.0")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("x-amzn-RequestId", "test-request")
        self.send_header("x-amz-crc32", str(zlib.crc32(body) & 0xFFFFFFFF))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        self.answered_at = time.monotonic()
        if self.server.close_after_response:
            self.connection.shutdown(socket.SHUT_WR)
            self.close_connection = True

    def do_HEAD(self):
        """S3-shaped: HeadBucket answers 200 with no body."""
        with self.server.lock:
            self.server.requests += 1
            self.server.targets.append("HEAD " + self.path)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.send_header("x-amz-request-id", "test-request")
        self.end_headers()

    def log_message(self, *args):
        pass


class DynamoDBShapedServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, delay_s=0.0, close_after_response=False, tls_context=None,
                 close_idle_after_s=None, stale_after_s=None, stale_mode="reset", hang_s=3.0, slow_once_s=None,
                 reset_once=False, throttle=False):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.tls_context = tls_context
        self.lock = threading.Lock()
        self.connections = 0
        self.requests = 0
        self.targets = []
        self.delay_s = delay_s
        self.close_after_response = close_after_response
        self.close_idle_after_s = close_idle_after_s
        self.stale_after_s = stale_after_s
        self.stale_mode = stale_mode
        self.hang_s = hang_s
        self.slow_once_s = slow_once_s
        # True: the first request on a reused connection is reset, once, whatever its idle time (a
        # one-off failure that says nothing about the path's idle timeout).
        self.reset_once = reset_once
        self.stale_hits = 0
        # One entry per TLS connection that sent a request: True if its handshake resumed.
        self.tls_resumed = []
        # True: every request is answered as a throttled one (400 ProvisionedThroughputExceededException).
        self.throttle = throttle
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    def get_request(self):
        sock, address = super().get_request()
        if self.tls_context is not None:
            # The handshake runs in the handler thread (first read), not in the accept loop.
            sock = self.tls_context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    @property
    def url(self):
        scheme = "https" if self.tls_context is not None else "http"
        host = "localhost" if self.tls_context is not None else "127.0.0.1"
        return "%s://%s:%d" % (scheme, host, self.server_address[1])

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=5)
