import socket
import time

import pytest

from lab.net.netem import Netem

RTT = 0.1  # large enough that scheduling noise on a loaded 2-core runner stays well below it
SLACK = 0.08


def _echo(s, data=b"x"):
    s.sendall(data)
    got = b""
    while len(got) < len(data):
        chunk = s.recv(65536)
        assert chunk, "connection closed"
        got += chunk
    return got


def test_new_connection_costs_one_rtt_then_one_rtt_per_exchange(echo_server):
    """First answer after connect takes 2 RTT (connect + round trip); later ones 1 RTT."""
    with Netem(echo_server.address, rtt=RTT) as net:
        t0 = time.monotonic()
        with socket.create_connection(net.address, timeout=5) as s:
            _echo(s)
            first = time.monotonic() - t0
            t1 = time.monotonic()
            _echo(s)
            second = time.monotonic() - t1
    assert 2 * RTT <= first < 2 * RTT + SLACK
    assert RTT <= second < RTT + SLACK


def test_pipelined_chunks_keep_order_and_are_not_serialised(echo_server):
    """20 chunks sent 5 ms apart arrive in order ~1 RTT late, not 20 delays one after another."""
    with Netem(echo_server.address, rtt=RTT) as net:
        with socket.create_connection(net.address, timeout=5) as s:
            _echo(s)  # established
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            expected = b"".join(b"%02d" % i for i in range(20))
            t0 = time.monotonic()
            for i in range(20):
                s.sendall(b"%02d" % i)
                time.sleep(0.005)
            got = b""
            while len(got) < len(expected):
                got += s.recv(65536)
            elapsed = time.monotonic() - t0
    assert got == expected
    assert RTT <= elapsed < 20 * 0.005 + RTT + SLACK


def test_counts_connections_and_bytes(echo_server):
    """accepted counts every accept; each connection's bytes up/down are recorded."""
    with Netem(echo_server.address, rtt=0.0) as net:
        for n in (3, 5):
            with socket.create_connection(net.address, timeout=5) as s:
                _echo(s, b"y" * n)
        deadline = time.monotonic() + 5
        while any(c.state == "open" for c in net.connections()) and time.monotonic() < deadline:
            time.sleep(0.02)
        conns = net.connections()
    assert net.accepted == 2
    assert [(c.bytes_up, c.bytes_down) for c in conns] == [(3, 3), (5, 5)]
    assert [c.state for c in conns] == ["closed", "closed"]


@pytest.mark.parametrize(
    "how, expect",
    [("fin", "eof"), ("rst", ConnectionResetError), ("drop", TimeoutError)],
)
def test_close_idle_fin_rst_drop(echo_server, how, expect):
    """fin -> the client reads EOF; rst -> ECONNRESET; drop -> no answer until the client's timeout."""
    with Netem(echo_server.address) as net:
        s = socket.create_connection(net.address, timeout=0.5)
        _echo(s)
        time.sleep(0.1)
        assert net.close_idle(min_idle=0.05, how=how) == 1
        assert net.close_idle(min_idle=0.0, how=how) == 0  # already handled
        time.sleep(0.1)
        try:
            if expect == "eof":
                assert s.recv(1) == b""
            else:
                with pytest.raises(expect):
                    s.sendall(b"z")
                    s.recv(1)
        finally:
            s.close()
        assert net.connections()[0].state == how


def test_close_idle_spares_busy_connections(echo_server):
    """Only connections idle for at least min_idle are hit."""
    with Netem(echo_server.address) as net:
        idle = socket.create_connection(net.address, timeout=2)
        busy = socket.create_connection(net.address, timeout=2)
        _echo(idle)
        time.sleep(0.3)
        _echo(busy)
        assert net.close_idle(min_idle=0.2, how="fin") == 1
        assert idle.recv(1) == b""
        assert _echo(busy) == b"x"
        idle.close()
        busy.close()


def test_idle_timeout_policy_resets_automatically(echo_server):
    """With idle_timeout/idle_action the proxy itself resets connections idle that long."""
    with Netem(echo_server.address, idle_timeout=0.3, idle_action="rst") as net:
        s = socket.create_connection(net.address, timeout=2)
        _echo(s)
        time.sleep(0.15)
        assert _echo(s) == b"x"  # activity restarts the idle clock
        time.sleep(0.7)
        with pytest.raises(ConnectionResetError):
            s.sendall(b"z")
            s.recv(1)
        s.close()


def test_tls_handshake_through_netem_pays_its_round_trips(echo_server):
    """function -> Netem -> TLS front: a new TLS connection's first answer costs 3 RTT, reuse 1 RTT."""
    import ssl

    from lab.net.tls_front import TLSFront

    with TLSFront(echo_server.address) as tls, Netem(tls.address, rtt=RTT) as net:
        ctx = ssl.create_default_context(cafile=tls.ca_bundle_path)
        t0 = time.monotonic()
        with ctx.wrap_socket(socket.create_connection(net.address, timeout=5), server_hostname="127.0.0.1") as s:
            _echo(s)
            new = time.monotonic() - t0
            t1 = time.monotonic()
            _echo(s)
            reused = time.monotonic() - t1
    assert 3 * RTT <= new < 4 * RTT  # TCP connect + TLS 1.3 handshake + request/response
    assert RTT <= reused < RTT + SLACK
