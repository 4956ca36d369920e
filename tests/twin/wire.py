"""What went on the wire, for the stock twin: a DynamoDB-shaped TLS server behind a TCP front that
reads each ClientHello (was a TLS 1.3 pre-shared key offered, with which identity), and can play a
middlebox; an HTTP CONNECT proxy, plain or behind TLS.  All on loopback, all threads of the test
process, each run of a scenario with its own (so the two twins' records never mix).

The front: per accepted connection it reads the client's first TLS record (the ClientHello),
finds the ``pre_shared_key`` extension (type 41, RFC 8446 4.2.11) and its first identity, then,
by ``mode``:

* ``pass``: connects to the server and relays both ways;
* ``drop_psk``: a ClientHello carrying a PSK is never forwarded and never answered (the
  connection is held open until the client gives up): a DPI firewall that silently eats it;
* ``reset_psk``: such a ClientHello is answered with a TCP reset (SO_LINGER 0, then close).
"""

import hashlib
import http.server
from http import HTTPStatus
import os
import select
import socket
import struct
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hook"))
from ddb_server import DynamoDBShapedServer, _Handler  # noqa: E402  (tests/hook/ddb_server.py)

PRE_SHARED_KEY = 41


def client_hello_psk(record):
    """The first PSK identity (bytes) a ClientHello record offers, or None; ValueError if
    ``record`` is not a ClientHello."""
    if len(record) < 9 or record[0] != 22 or record[5] != 1:
        raise ValueError("not a ClientHello")
    body = record[9:]
    at = 2 + 32  # legacy_version, random
    at += 1 + body[at]  # legacy_session_id
    at += 2 + struct.unpack_from("!H", body, at)[0]  # cipher_suites
    at += 1 + body[at]  # legacy_compression_methods
    if at + 2 > len(body):
        return None
    end = at + 2 + struct.unpack_from("!H", body, at)[0]
    at += 2
    while at + 4 <= end:
        kind, length = struct.unpack_from("!HH", body, at)
        if kind == PRE_SHARED_KEY:
            # PreSharedKeyExtension: identities<7..2^16-1>, each identity<1..2^16-1> + ticket age.
            identity_length = struct.unpack_from("!H", body, at + 6)[0]
            return bytes(body[at + 8:at + 8 + identity_length])
        at += 4 + length
    return None


def _read_record(sock, timeout_s=10.0):
    """One whole TLS record from ``sock`` (header + body), or what came before EOF."""
    sock.settimeout(timeout_s)
    data = b""
    while len(data) < 5 or len(data) < 5 + struct.unpack_from("!H", data, 3)[0]:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


def _relay(a, b, stop):
    """Copy bytes both ways between sockets ``a`` and ``b`` until either side closes.

    A side's close that came with its last bytes (the endpoint's server corks its answer and
    shuts down: one segment) is passed on with them, in one segment too.  Passed on a loop later,
    it reached the client a moment after the answer, and a call made in between went into the
    closing connection (urllib3 looks for a close before it reuses one): RemoteDisconnected or an
    SSLEOFError, and botocore's retry -- up to 9 of test_gc's 30 churned clients a run, in either
    twin (test_wire)."""
    sockets = [a, b]
    try:
        while not stop.is_set():
            readable, _, _ = select.select(sockets, [], [], 0.5)
            for sock in readable:
                data = sock.recv(65536)
                if not data:
                    return
                other = b if sock is a else a
                if _closed_after(sock):
                    other.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)
                    other.sendall(data)
                    other.shutdown(socket.SHUT_WR)  # uncorks: the data and the FIN together
                    return
                other.sendall(data)
    except OSError:
        pass
    finally:
        for sock in sockets:
            try:
                sock.close()
            except OSError:
                pass


def _closed_after(sock):
    """Whether ``sock``'s peer closed right after what was just read from it (its FIN is queued:
    reading on would return b""), without waiting; False for a TLS socket (no flags there).

    select first: on a socket with a timeout (the front's client socket, _read_record), Python
    waits for it to be readable before any recv, MSG_DONTWAIT or not -- up to the timeout, which
    held each request 10 s.  A reset queued behind the bytes (a close with unread data, SO_LINGER 0)
    answers False: the bytes are sent on first, and the relay's next recv meets the reset, as before
    this check (raised here, it dropped them: test_wire)."""
    if not select.select([sock], [], [], 0)[0]:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except (ValueError, ConnectionError):
        return False


class _Listener:
    """An accept loop on 127.0.0.1 handling each connection in a daemon thread."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self):
        self.listener.settimeout(0.5)
        while not self.stop.is_set():
            try:
                sock, _ = self.listener.accept()
            except (socket.timeout, OSError):
                continue
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def close(self):
        self.stop.set()
        self._thread.join(timeout=5)
        self.listener.close()


class Front(_Listener):
    """The recording (and, by ``mode``, misbehaving) TCP front of a server at ``backend`` port."""

    def __init__(self, backend_port, mode="pass"):
        self.backend_port = backend_port
        self.mode = mode
        # One entry per connection, in accept order: the PSK identity's sha256 (hex, 12) or None.
        self.offers = []
        super().__init__()

    def _serve(self, sock):
        try:
            hello = _read_record(sock)
            try:
                identity = client_hello_psk(hello)
            except ValueError:
                identity = None
            with self.lock:
                self.offers.append(hashlib.sha256(identity).hexdigest()[:12] if identity else None)
            if identity is not None and self.mode == "drop_psk":
                sock.settimeout(None)
                while sock.recv(65536):
                    pass
                sock.close()
                return
            if identity is not None and self.mode == "reset_psk":
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                sock.close()
                return
            backend = socket.create_connection(("127.0.0.1", self.backend_port))
            backend.sendall(hello)
        except OSError:
            sock.close()
            return
        _relay(sock, backend, self.stop)


class _RecordingHandler(_Handler):
    """tests/hook/ddb_server.py's handler, also noting each request's client certificate, and
    reading the body of each PUT it refuses (S3's PutObject, UploadPart)."""

    def do_PUT(self):
        """The 501 http.server gives a method it does not serve, once the body is read.  botocore
        sends S3's PUTs with ``Expect: 100-continue`` and http.server answers "100 Continue" before
        it looks for a do_PUT: the client then sends its body.  Answering 501 and closing without
        reading it races the client's writes -- data arriving at (or left unread in) a closed
        socket is answered with a reset -- and the client's send of the body's last chunk fails
        with ``SSLError: EOF occurred in violation of protocol`` instead of reading the 501: stock
        and the layer alike (the models case's S3 'sent' call, about 1 run in 3 at load ~30;
        tests/twin/test_wire.py: 33 of 40 bare put_object calls without this read)."""
        self._read_body()
        self.send_error(HTTPStatus.NOT_IMPLEMENTED, "Unsupported method (%r)" % self.command)

    def _read_body(self):
        """Consume the request's body: Content-Length bytes, or chunks up to the last one and its
        trailer (urllib3 sends botocore's aws-chunked payload with Transfer-Encoding: chunked)."""
        if "chunked" not in self.headers.get("Transfer-Encoding", "").lower():
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            return
        while True:
            size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                break
            self.rfile.read(size + 2)  # the chunk and its CRLF
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass  # the trailer, up to its empty line

    def do_POST(self):
        peer = None
        if self.server.tls_context is not None:
            der = self.connection.getpeercert(binary_form=True)
            peer = hashlib.sha256(der).hexdigest()[:12] if der else None
        with self.server.lock:
            self.server.client_certs.append(peer)
        super().do_POST()


class _FreshContexts:
    """A server TLS context whose ticket keys are new at each connection (a fleet sharing none):
    every offered ticket is refused, the handshake falls back to a full one."""

    def __init__(self, make_context):
        self.make_context = make_context

    def wrap_socket(self, *args, **kwargs):
        return self.make_context().wrap_socket(*args, **kwargs)


class Wire:
    """One scenario check's endpoint: a server (TLS unless ``make_context`` is None) behind a
    Front.  ``url`` is what the function calls; ``observed()`` what happened."""

    def __init__(self, make_context, mode="pass", refuse_tickets=False, close_after_response=True):
        context = None
        if make_context is not None:
            context = _FreshContexts(make_context) if refuse_tickets else make_context()
        self.server = DynamoDBShapedServer(tls_context=context, close_after_response=close_after_response)
        self.server.RequestHandlerClass = _RecordingHandler
        self.server.client_certs = []
        # Refused handshakes are part of the scenarios: no traceback per connection.
        self.server.handle_error = lambda request, client_address: None
        self.server.__enter__()
        self.front = Front(self.server.server_address[1], mode=mode)
        scheme = "https" if context is not None else "http"
        self.url = "%s://localhost:%d" % (scheme, self.front.port)

    def observed(self):
        with self.front.lock:
            offers = list(self.front.offers)
        return {
            "connections": len(offers),
            "psk_offers": sum(1 for offer in offers if offer),
            "psk_identities": len(set(offer for offer in offers if offer)),
            "offers": offers,
            "requests": self.server.requests,
            "resumed": sum(1 for resumed in self.server.tls_resumed if resumed),
            "client_certs": list(self.server.client_certs),
        }

    def close(self):
        self.front.close()
        self.server.__exit__(None, None, None)


class _ConnectHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_CONNECT(self):
        host, _, port = self.path.rpartition(":")
        with self.server.lock:
            self.server.connects.append(self.path)
        try:
            upstream = socket.create_connection(("127.0.0.1" if host == "localhost" else host, int(port)))
        except OSError:
            self.send_error(502)
            return
        self.send_response(200, "Connection established")
        self.end_headers()
        self.wfile.flush()
        _relay(self.connection, upstream, threading.Event())
        self.close_connection = True

    def log_message(self, *args):
        pass


class ConnectProxy(http.server.ThreadingHTTPServer):
    """An HTTP CONNECT proxy on loopback (behind TLS when ``tls_context`` is given: an https://
    proxy), recording each CONNECT target."""

    daemon_threads = True

    def __init__(self, tls_context=None):
        super().__init__(("127.0.0.1", 0), _ConnectHandler)
        self.tls_context = tls_context
        self.lock = threading.Lock()
        self.connects = []
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        self.url = "%s://localhost:%d" % ("https" if tls_context else "http", self.server_address[1])

    def get_request(self):
        sock, address = super().get_request()
        if self.tls_context is not None:
            sock = self.tls_context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address

    def close(self):
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=5)
