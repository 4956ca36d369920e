"""Helpers the test handlers use to read back what botocore's pooled sockets really carry, and
what trust they load.

Copied into each test's stand-in /var/task, next to the handler.  Reads the options with
getsockopt() from the sockets of the connections sitting in a client's urllib3 pools.
"""

import contextlib
import socket


def pooled_connections(client):
    manager = client._endpoint.http_session._manager
    for key in list(manager.pools.keys()):
        pool = manager.pools[key]
        for conn in list(pool.pool.queue):
            if conn is not None:
                yield pool, conn


def socket_options(sock):
    return {
        "SO_KEEPALIVE": sock.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
        "TCP_KEEPIDLE": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE),
        "TCP_KEEPINTVL": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL),
        "TCP_KEEPCNT": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT),
        "TCP_NODELAY": sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY),
    }


def client_socket_options(client):
    """Options of every live pooled socket of ``client`` (a list, one dict per socket)."""
    return [
        socket_options(conn.sock)
        for _, conn in pooled_connections(client)
        if getattr(conn, "sock", None) is not None
    ]


def max_pool_connections(client):
    return client.meta.config.max_pool_connections


def record_ca_loads():
    """From now on, every SSLContext.load_verify_locations call of this process appends
    [cafile, capath] to the list returned (and loads as asked)."""
    import ssl

    loaded = []
    original = ssl.SSLContext.load_verify_locations

    def recording(self, cafile=None, capath=None, cadata=None):
        loaded.append([cafile, capath])
        return original(self, cafile, capath, cadata)

    ssl.SSLContext.load_verify_locations = recording
    return loaded


@contextlib.contextmanager
def list_tables_server():
    """A DynamoDB-shaped HTTP/1.1 keep-alive server on loopback for one handler run, answering every
    POST as ListTables with no tables: yields its port.  (http.server is imported here, not at the
    top, so handlers that only read socket options import nothing more.)"""
    import http.server
    import threading

    class Answer(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            body = b'{"TableNames": []}'
            self.send_response(200)
            self.send_header("Content-Type", "application/x-amz-json-1.0")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
