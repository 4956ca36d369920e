"""Linux ``TCP_INFO``: how long ago a connection last heard from its peer.

``getsockopt(IPPROTO_TCP, TCP_INFO)`` fills ``struct tcp_info`` (include/uapi/linux/tcp.h). Its
start has been stable since Linux 2.6 (fields are only ever appended), so fixed offsets are safe:

    offset  0  u8   tcpi_state          (1 = ESTABLISHED)
    offset  3  u8   tcpi_probes         unanswered zero-window/keep-alive probes (icsk_probes_out)
    offset  8  u32  tcpi_rto            microseconds
    offset 44  u32  tcpi_last_data_sent milliseconds since we last sent data
    offset 52  u32  tcpi_last_data_recv milliseconds since we last received data
    offset 56  u32  tcpi_last_ack_recv  milliseconds since we last received an ACK

``tcpi_last_ack_recv`` is ``now - tp->rcv_tstamp``, and the kernel updates ``rcv_tstamp`` for every
acceptable ACK, including the duplicate ACK a peer sends in answer to a keep-alive probe (the keep-
alive timer itself uses that timestamp to decide when the next probe is due). So a connection that
probes keep proving alive shows a small ``last_ack_recv`` even though no data moved for minutes;
``tests/lab/net/test_tcpinfo.py`` pins that, and ``lab/experiments/measure_keepalive/run.py`` prints the numbers.
"""

from __future__ import annotations

import socket
import struct

# Enough for every field above; the kernel copies min(len, sizeof(struct tcp_info)).
_LEN = 104
_FIELDS = {
    "state": ("B", 0),
    "probes": ("B", 3),
    "rto_us": ("I", 8),
    "last_data_sent_ms": ("I", 44),
    "last_data_recv_ms": ("I", 52),
    "last_ack_recv_ms": ("I", 56),
}
LAST_ACK_RECV_OFFSET = 56
TCP_ESTABLISHED = 1


def tcp_info(sock: socket.socket) -> dict[str, int]:
    """The fields above, by name."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _LEN)
    return {name: struct.unpack_from(fmt, raw, off)[0] for name, (fmt, off) in _FIELDS.items()}


def last_ack_recv_ms(sock: socket.socket) -> int:
    """Milliseconds since the peer last ACKed anything (data or a keep-alive probe)."""
    raw = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _LEN)
    return struct.unpack_from("I", raw, LAST_ACK_RECV_OFFSET)[0]
