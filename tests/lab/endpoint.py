"""A minimal DynamoDB-shaped HTTP endpoint for the stand-in's tests (no Java, no TLS).

It answers every request with ``200 {}`` on a kept-alive connection, which is all botocore needs for
``put_item``. ``reset_requests(n)`` makes the next n requests fail the way a NAT that forgot the flow
makes them fail: the request is read, then the connection is closed with an RST (SO_LINGER 0), so
botocore sees a ConnectionClosedError and retries on a new connection.
"""

import socket
import socketserver
import struct
import threading

from lab.net.server_thread import ServerThread


class _Handler(socketserver.BaseRequestHandler):
    def handle(self):
        server = self.server
        stream = self.request.makefile("rb")
        while True:
            headers = {}
            line = stream.readline()
            if not line:
                return
            while True:
                header = stream.readline()
                if header in (b"\r\n", b"\n", b""):
                    break
                name, _, value = header.decode("latin-1").partition(":")
                headers[name.strip().lower()] = value.strip()
            stream.read(int(headers.get("content-length", 0)))
            with server.lock:
                server.requests += 1
                reset = server.resets_left > 0
                if reset:
                    server.resets_left -= 1
            if reset:
                self.request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.request.close()
                return
            body = b"{}"
            self.request.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.0\r\n"
                b"x-amzn-RequestId: lab\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))


class Endpoint(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, host="127.0.0.1"):
        super().__init__((host, 0), _Handler)
        self.lock = threading.Lock()
        self.requests = 0
        self.resets_left = 0
        self._serving = ServerThread(self, "lab-endpoint")

    @property
    def url(self):
        return "http://%s:%d" % self.server_address[:2]

    def reset_requests(self, n):
        with self.lock:
            self.resets_left = n

    def close(self):
        self._serving.close()
