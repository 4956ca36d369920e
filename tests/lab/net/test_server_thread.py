import socket
import socketserver
import threading

import pytest

from lab.net.server_thread import ServerThread


class _Upper(socketserver.StreamRequestHandler):
    def handle(self):
        self.wfile.write(self.rfile.readline().upper())


def test_serves_on_a_named_thread_until_closed():
    """The server answers while the caller goes on, on a daemon thread of the given name; close()
    ends that thread and closes the listening socket (a new connection is refused)."""
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Upper)
    server.daemon_threads = True
    serving = ServerThread(server, "upper-test")
    address = server.server_address
    try:
        with socket.create_connection(address, timeout=5) as client:
            client.sendall(b"ping\n")
            assert client.makefile("rb").readline() == b"PING\n"
        [thread] = [t for t in threading.enumerate() if t.name == "upper-test"]
        assert thread.daemon
    finally:
        serving.close()
    assert not thread.is_alive()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(address, timeout=5).close()
