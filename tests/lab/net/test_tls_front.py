import socket
import ssl
import time

import pytest

from lab.net.tls_front import TLSFront


def _tls_connect(address, server_hostname, cafile):
    ctx = ssl.create_default_context(cafile=cafile)
    raw = socket.create_connection(address, timeout=5)
    return ctx.wrap_socket(raw, server_hostname=server_hostname)


def test_relays_bytes_over_verified_tls(echo_server):
    """A client trusting only the written CA file completes TLS and gets the upstream's bytes."""
    with TLSFront(echo_server.address) as tls:
        with _tls_connect(tls.address, "127.0.0.1", tls.ca_bundle_path) as s:
            s.sendall(b"hello")
            assert s.recv(10) == b"hello"
            assert s.version() in ("TLSv1.2", "TLSv1.3")
        assert tls.accepted == 1


def test_untrusted_client_fails_verification(echo_server):
    """Without the lab CA, certificate verification fails (the front really does TLS)."""
    with TLSFront(echo_server.address) as tls:
        with pytest.raises(ssl.SSLCertVerificationError):
            _tls_connect(tls.address, "127.0.0.1", None)


def test_hostnames_added_later_are_accepted(echo_server):
    """add_hostnames() reissues the certificate so new handshakes verify for the new name."""
    with TLSFront(echo_server.address, hostnames=["localhost"]) as tls:
        with pytest.raises(ssl.SSLCertVerificationError):
            _tls_connect(tls.address, "127.0.0.1", tls.ca_bundle_path)
        tls.add_hostnames("127.0.0.1")
        with _tls_connect(tls.address, "127.0.0.1", tls.ca_bundle_path) as s:
            s.sendall(b"ok")
            assert s.recv(2) == b"ok"


def test_one_upstream_connection_per_client_and_close_is_mirrored(echo_server):
    """Each client connection gets its own upstream connection; closing the upstream ends the client's."""
    with TLSFront(echo_server.address) as tls:
        a = _tls_connect(tls.address, "127.0.0.1", tls.ca_bundle_path)
        b = _tls_connect(tls.address, "127.0.0.1", tls.ca_bundle_path)
        for s in (a, b):
            s.sendall(b"x")
            assert s.recv(1) == b"x"
        assert echo_server.accepted == 2
        echo_server.stop()  # closes both upstream connections
        for s in (a, b):
            assert s.recv(1) == b""
            s.close()


def test_stop_closes_client_connections_and_listener(echo_server):
    """After stop() the port refuses connections and open clients see their connection end."""
    tls = TLSFront(echo_server.address).start()
    s = _tls_connect(tls.address, "127.0.0.1", tls.ca_bundle_path)
    s.sendall(b"x")
    assert s.recv(1) == b"x"
    address = tls.address
    tls.stop()
    try:
        assert s.recv(1) == b""
    except (ssl.SSLError, OSError):
        pass
    s.close()
    with pytest.raises(OSError):
        socket.create_connection(address, timeout=2).close()


class _OneShotServer:
    """Answers one chunk per connection, then closes it (like a server's idle timeout, at once)."""

    def __init__(self):
        import threading

        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = self.listener.getsockname()
        self.accepted = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            with conn:
                conn.sendall(conn.recv(100))

    def close(self):
        self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        self.thread.join(5)


@pytest.mark.parametrize("reopen", [False, True])
def test_reopen_upstream_hides_the_servers_idle_close(reopen):
    """reopen_upstream=True keeps the client connection when the upstream closes; False mirrors the close."""
    server = _OneShotServer()
    try:
        with TLSFront(server.address, reopen_upstream=reopen) as tls:
            with _tls_connect(tls.address, "127.0.0.1", tls.ca_bundle_path) as s:
                s.sendall(b"one")
                assert s.recv(10) == b"one"
                if reopen:
                    time.sleep(0.2)  # the upstream's close arrives first, as after an idle timeout
                    s.sendall(b"two")
                    assert s.recv(10) == b"two"
                    assert (tls.accepted, tls.upstream_connections, server.accepted) == (1, 2, 2)
                else:
                    assert s.recv(10) == b""
    finally:
        server.close()


def test_a_slow_client_handshake_is_not_cut(echo_server):
    """A client that stalls 11 s in the middle of its handshake (a CPU-starved function: after its
    ClientHello, before its Finished) still completes it and gets its bytes relayed: the front
    leaves it to the client's own timeouts (it closed such a connection after 10 s, which botocore
    reported as UNEXPECTED_EOF_WHILE_READING, issue 31)."""
    with TLSFront(echo_server.address) as tls:
        context = ssl.create_default_context(cafile=tls.ca_bundle_path)
        incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        client = context.wrap_bio(incoming, outgoing, server_hostname="127.0.0.1")
        with socket.create_connection(tls.address, timeout=30) as raw:
            stalled = False
            while True:
                try:
                    client.do_handshake()
                    break
                except ssl.SSLWantReadError:
                    pass
                raw.sendall(outgoing.read())
                if not stalled:
                    time.sleep(11)
                    stalled = True
                data = raw.recv(65536)
                assert data, "the front closed the connection during the handshake"
                incoming.write(data)
            client.write(b"late")
            raw.sendall(outgoing.read())
            echoed = b""
            while len(echoed) < 4:
                try:
                    echoed += client.read(4)
                except ssl.SSLWantReadError:
                    data = raw.recv(65536)
                    assert data, "the front closed the connection it had not finished handshaking"
                    incoming.write(data)
            assert echoed == b"late"
