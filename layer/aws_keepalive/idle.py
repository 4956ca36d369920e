"""When a pooled connection must not be reused: the one rule shared by every client family.

botocore's urllib3 pool (patch.py) and, as client families are added, their own pools call the
same two functions, so "stale" means the same thing everywhere:

* ``stamp()`` when a connection goes back to its pool;
* ``replace_reason(stamp, sock, max_idle_s)`` when it is taken out again: a reason to close it
  and open a new one, or None to reuse it.

A connection is replaced when it sat idle for more than ``max_idle_s`` -- unless keep-alive
probes proved the flow alive recently (see ``keepalive_answered_s``) -- or when it went back to
the pool before a restore of the execution environment from a snapshot (``restore_generation``,
bumped by whatever notices a restore): its flow does not exist on the restored environment's
network path, whatever the clocks say.
"""

import socket
import time

# Bumped once per restore of the execution environment from a snapshot.  A stamp taken before
# the bump belongs to a connection whose flow the network has never seen from this environment.
restore_generation = 0
# True once something (snapstart.py) will bump restore_generation: the pool must then be watched
# even when max idle is off.
restore_watched = False

# Reasons, as the debug lines print them.
MAX_IDLE = "max idle"
RESTORED = "restored"


def stamp():
    """What to remember about a connection when it goes back to the pool."""
    return (time.monotonic(), time.time(), restore_generation)


def idle_seconds(since):
    """Seconds since ``stamp()`` returned ``since`` (0 if None).

    Measured on both clocks and the larger taken: CLOCK_MONOTONIC is immune to wall-clock steps,
    but whether it advances while Lambda freezes the execution environment is not documented;
    the wall clock is corrected when the environment thaws.  Overstating the idle time costs one
    handshake; understating it could cost a reset or a hang.
    """
    if since is None:
        return 0.0
    monotonic_then, wall_then = since[0], since[1]
    return max(time.monotonic() - monotonic_then, time.time() - wall_then)


def replace_reason(since, sock, max_idle_s):
    """(reason, idle_s, answered_s): reason is None to reuse the connection, else why to replace it.

    ``answered_s`` is set when the connection was idle past ``max_idle_s`` but is reused because
    keep-alive probes were answered that many seconds ago (callers say so in a debug line).
    """
    if since is None:
        return None, 0.0, None
    if since[2] != restore_generation:
        return RESTORED, idle_seconds(since), None
    if not max_idle_s:
        return None, 0.0, None
    idle_s = idle_seconds(since)
    if idle_s <= max_idle_s:
        return None, idle_s, None
    answered_s = keepalive_answered_s(sock, idle_s)
    if answered_s is not None and answered_s < max_idle_s:
        return None, idle_s, answered_s
    return MAX_IDLE, idle_s, None


# struct tcp_info (include/uapi/linux/tcp.h): eight one-byte fields, then u32 fields; the four
# "times" (milliseconds ago) start at byte 44: last_data_sent, last_ack_sent (unused by Linux),
# last_data_recv, last_ack_recv.  Stable since Linux 2.6.
_TCP_INFO_TIMES_OFFSET = 44
_TCP_INFO_LENGTH = 60


def keepalive_answered_s(sock, idle_s):
    """Seconds since the peer last ACKed anything, if the kernel's clock can be trusted; else None.

    A connection idle for longer than max_idle_s is still fine to reuse when keep-alive probes
    crossed the middlebox recently: each probe's answer refreshes the flow at the NAT, and Linux
    notes its arrival (tcpi_last_ack_recv).  But that clock (jiffies) is the guest kernel's: if the
    whole execution environment was frozen, the kernel may not have counted the frozen time, and a
    small "last ACK" would then be a lie.  The kernel also says how long ago the last *data*
    arrived (tcpi_last_data_recv); that was the end of the last response, just before the
    connection went idle, so when the kernel's figure falls short of the idle time measured here,
    its clock missed part of the gap and nothing it says is used.
    """
    import struct

    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, _TCP_INFO_LENGTH)
        _, _, last_data_recv_ms, last_ack_recv_ms = struct.unpack_from(
            "=4I", info, _TCP_INFO_TIMES_OFFSET
        )
    except (AttributeError, OSError, struct.error):
        return None  # not Linux, not TCP, or a closed socket: no evidence, replace
    if last_data_recv_ms / 1000.0 + 2.0 < idle_s:
        return None
    return last_ack_recv_ms / 1000.0
