import socket

from lab.net.echo import EchoServer


def test_echoes_and_counts_connections():
    """Every byte sent comes back on the same connection, and each accept is counted."""
    with EchoServer() as echo:
        for _ in range(2):
            with socket.create_connection(echo.address, timeout=5) as s:
                s.sendall(b"ping")
                assert s.recv(10) == b"ping"
        assert echo.accepted == 2


def test_stop_closes_open_connections():
    """stop() closes connections still open, so the client reads EOF instead of hanging."""
    echo = EchoServer().start()
    s = socket.create_connection(echo.address, timeout=5)
    s.sendall(b"x")
    assert s.recv(1) == b"x"
    echo.stop()
    assert s.recv(1) == b""
    s.close()
