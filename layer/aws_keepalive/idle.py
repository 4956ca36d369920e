"""When a pooled connection must not be reused: the one rule shared by every client family.

botocore's urllib3 pool (patch.py) and, as client families are added, their own pools call the
same two functions, so "stale" means the same thing everywhere:

* ``stamp()`` when a connection goes back to its pool;
* ``replace_reason(stamp, sock, max_idle_s, host)`` when it is taken out again: a reason to
  close it and open a new one, or None to reuse it;
* ``reused_ok(host, idle_s)`` / ``reused_stale(host, idle_s)`` when a request on a reused
  connection got its response, or failed before any response byte (a stale reuse).

A connection is replaced when it sat idle for more than ``max_idle_s`` -- unless keep-alive
probes proved the flow alive recently (see ``keepalive_answered_s``) -- or when it went back to
the pool before a restore of the execution environment from a snapshot (``restore_generation``,
bumped by whatever notices a restore): its flow does not exist on the restored environment's
network path, whatever the clocks say.

The learned idle limit.  Max idle (300 s) is set against the 350 s AWS documents for NAT
gateways, NLBs and VPC endpoints; a firewall, proxy or Lambda's own purge may forget a flow
sooner, and then the layer would meet the same reset (or hang) after every long gap.  So after a
stale reuse at idle X on a host, that host's pooled connections are replaced once idle for more
than ``LEARN_FRACTION`` x X ("learned idle"): the path's real timeout T lies below X, and
connections reused at X again (gaps as long as the failing one, give or take scheduling jitter)
would meet it again.  If T is lower still, the next failure lowers the limit again, so the limit
converges on T from above, one failure at a time.  Two bounds:

* never below the longest idle that was reused successfully on that host (that flow survived,
  so the path's timeout is above it -- and a read timeout that was a slow server, not a dead
  flow, cannot push the limit under what is known to work);
* never above max idle (which already replaces anything idle longer), and with max idle off
  (``AWS_PYTHON_KEEPALIVE_MAX_IDLE=0``, "never replace idle connections") nothing is learned.

Idle times come from ``idle_seconds`` (the larger of the monotonic and the wall clock, see
there): a clock that missed a freeze can only understate a failure's idle time, which lowers the
limit (one more handshake), never raises it past a failure.  The per-host table is shared by
every client and thread of the process: writes hold a lock, reads take one list element, which
is atomic; it holds one entry per endpoint host the function talks to.
"""

import socket
import threading
import time

# Bumped once per restore of the execution environment from a snapshot.  A stamp taken before
# the bump belongs to a connection whose flow the network has never seen from this environment.
restore_generation = 0
# True once something (snapstart.py) will bump restore_generation: the pool must then be watched
# even when max idle is off.
restore_watched = False

# Reasons, as the debug lines print them.
MAX_IDLE = "max idle"
LEARNED_IDLE = "learned idle"
RESTORED = "restored"

# Set by patch.apply from AWS_PYTHON_KEEPALIVE_LEARN (on by default; acts only after a failure).
learn = True
# The learned limit is this fraction of the shortest idle time that met a stale flow.
LEARN_FRACTION = 0.8
# host -> [longest idle reused successfully (s), shortest idle that met a stale flow (s) or None]
_hosts = {}
_hosts_lock = threading.Lock()


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


def replace_reason(since, sock, max_idle_s, host=None):
    """(reason, idle_s, answered_s): reason is None to reuse the connection, else why to replace it.

    ``answered_s`` is set when the connection was idle past its limit (max idle, or the learned
    limit of ``host``) but is reused because keep-alive probes were answered that many seconds ago
    (callers say so in a debug line and count it).
    """
    if since is None:
        return None, 0.0, None
    if since[2] != restore_generation:
        return RESTORED, idle_seconds(since), None
    if not max_idle_s:
        return None, 0.0, None
    idle_s = idle_seconds(since)
    limit_s, reason = max_idle_s, MAX_IDLE
    if learn and host is not None:
        learned_s = learned_limit_s(host)
        if learned_s is not None and learned_s < max_idle_s:
            limit_s, reason = learned_s, LEARNED_IDLE
    if idle_s <= limit_s:
        return None, idle_s, None
    answered_s = keepalive_answered_s(sock, idle_s)
    if answered_s is not None and answered_s < limit_s:
        return None, idle_s, answered_s
    return reason, idle_s, None


def learned_limit_s(host):
    """The learned idle limit of ``host`` in seconds, or None before any stale reuse there."""
    state = _hosts.get(host)
    if state is None or state[1] is None:
        return None
    return max(state[0], state[1] * LEARN_FRACTION)


def reused_ok(host, idle_s):
    """A request on a connection reused after ``idle_s`` got its response: the flow was alive."""
    state = _hosts.get(host)
    if state is not None and idle_s <= state[0]:
        return  # the common case, without the lock
    with _hosts_lock:
        state = _hosts.setdefault(host, [0.0, None])
        if idle_s > state[0]:
            state[0] = idle_s


def reused_stale(host, idle_s):
    """A request on a connection reused after ``idle_s`` met a dead flow; returns the host's
    learned limit from now on (None when learning is off)."""
    with _hosts_lock:
        state = _hosts.setdefault(host, [0.0, None])
        if state[1] is None or idle_s < state[1]:
            state[1] = idle_s
    return learned_limit_s(host) if learn else None


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
