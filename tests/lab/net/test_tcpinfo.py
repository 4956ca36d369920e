import socket
import time

from lab.net import tcpinfo


def _connect(address, keepalive):
    s = socket.create_connection(address, timeout=5)
    if keepalive:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 1)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, 1)
    s.sendall(b"x")
    assert s.recv(1) == b"x"
    return s


def test_reads_state_and_data_timers(echo_server):
    """tcp_info() decodes an established socket: state 1 and millisecond timers that grow."""
    with _connect(echo_server.address, keepalive=False) as s:
        time.sleep(0.3)
        info = tcpinfo.tcp_info(s)
        assert info["state"] == tcpinfo.TCP_ESTABLISHED
        assert 250 <= info["last_data_recv_ms"] < 2000
        assert 250 <= info["last_ack_recv_ms"] < 2000
        assert tcpinfo.last_ack_recv_ms(s) >= info["last_ack_recv_ms"]


def test_last_ack_recv_reflects_keepalive_probe_acks(echo_server):
    """Probe ACKs reset last_ack_recv (offset 56) while last_data_recv keeps growing; no probes, no reset."""
    probed = _connect(echo_server.address, keepalive=True)
    silent = _connect(echo_server.address, keepalive=False)
    with probed, silent:
        time.sleep(2.6)  # first probe at ~1 s, then one about every second
        p, q = tcpinfo.tcp_info(probed), tcpinfo.tcp_info(silent)
    assert p["last_data_recv_ms"] >= 2500
    assert p["last_ack_recv_ms"] < 1500, p
    assert p["probes"] == 0  # every probe was answered
    assert q["last_ack_recv_ms"] >= 2500, q
